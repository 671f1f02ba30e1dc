package http

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// TokenFile is the operator's token file under the state root (used
// unless service.tokenEnv names a variable).
const TokenFile = "service.token"

// TokenEnvVar is the variable the SDK (and an MCP client's wrapper) reads
// the operator's token from when no option gives one.
const TokenEnvVar = "THE_LOOP_TOKEN"

// tokenBytes is the operator token's size: 256 random bits, hex-encoded.
const tokenBytes = 32

// TokenPath is <stateDir>/service.token.
func TokenPath(stateDir string) string { return filepath.Join(stateDir, TokenFile) }

// TokenSource names where the operator's token lives, for messages: the
// variable service.tokenEnv names, or the token file.
func TokenSource(cfg *config.Config) string {
	if cfg.Service.TokenEnv != "" {
		return "$" + cfg.Service.TokenEnv + " (service.tokenEnv)"
	}
	return TokenPath(cfg.StateDir())
}

// EnsureStateRoot creates the state root 0700 when it is missing and
// refuses one another user owns or that group or others may write.
func EnsureStateRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot create the state root %s (state.root): %w", dir, err)
	}
	return CheckPrivate(dir, "state root (state.root)")
}

// CheckPrivate refuses a file or directory (what names it in the message)
// that another user owns or that group or others may write; a token file
// (any file holding a secret) must also not be readable by them. A path
// that does not exist passes.
func CheckPrivate(path, what string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot check the %s %s: %w", what, path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return loop.Invalid("refusing the %s %s: it is owned by uid %d, not by this user (uid %d); chown it or choose another state.root",
			what, path, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return loop.Invalid("refusing the %s %s: its mode %04o lets group or others write it; run chmod go-w %s",
			what, path, perm, path)
	}
	return nil
}

// checkSecretFile is CheckPrivate for a file holding a secret: group and
// others may not read it either.
func checkSecretFile(path string) error {
	if err := CheckPrivate(path, "token file"); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot check the token file %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return loop.Invalid("refusing the token file %s: its mode %04o lets group or others read it; run chmod 600 %s, then `the-loop token --rotate` (the old token may have been read)",
			path, perm, path)
	}
	return nil
}

// ReadTokenFile reads the operator's token from <stateDir>/service.token,
// refusing a file others may read or write. A missing file is an
// EINVALID error naming it and the remedy.
func ReadTokenFile(stateDir string) (string, error) {
	path := TokenPath(stateDir)
	if err := CheckPrivate(stateDir, "state root (state.root)"); err != nil {
		return "", err
	}
	if err := checkSecretFile(path); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", loop.Invalid("no operator token at %s: the service creates it at its first start (`the-loop start` or `the-loop serve`)", path)
	}
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot read the token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", loop.Invalid("the token file %s is empty; run `the-loop token --rotate`", path)
	}
	return token, nil
}

// EnsureTokenFile returns the operator's token from the state root,
// creating the state root (0700) and the token file (0600, 256 random
// bits) at the first start. An existing file is kept, across restarts.
func EnsureTokenFile(stateDir string) (string, error) {
	if err := EnsureStateRoot(stateDir); err != nil {
		return "", err
	}
	token, err := ReadTokenFile(stateDir)
	if err == nil {
		return token, nil
	}
	if _, serr := os.Stat(TokenPath(stateDir)); !errors.Is(serr, fs.ErrNotExist) {
		return "", err
	}
	return writeTokenFile(stateDir, false)
}

// RotateTokenFile replaces the operator's token file with a new token and
// returns it. A running service keeps the token it started with until it
// restarts.
func RotateTokenFile(stateDir string) (string, error) {
	if err := EnsureStateRoot(stateDir); err != nil {
		return "", err
	}
	return writeTokenFile(stateDir, true)
}

// writeTokenFile writes a new token: into a 0600 temporary file renamed
// over the token file (replace), or created exclusively (first start, so
// two starting processes never hand out different tokens).
func writeTokenFile(stateDir string, replace bool) (string, error) {
	path := TokenPath(stateDir)
	token := NewSecret()
	f, err := os.CreateTemp(stateDir, ".service.token-*")
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot write the token file %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err = f.Chmod(0o600); err == nil {
		_, err = f.WriteString(token + "\n")
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if replace {
			err = os.Rename(tmp, path)
		} else if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
			return ReadTokenFile(stateDir) // another process made it first
		}
	}
	if err != nil {
		return "", loop.Errorf(loop.EINTERNAL, "cannot write the token file %s: %w", path, err)
	}
	return token, nil
}

// NewSecret returns 256 random bits, hex-encoded (an operator token or an
// agent credential).
func NewSecret() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// OperatorToken is the token the service asks for and the CLI sends: the
// value of the variable service.tokenEnv names (empty or unset is an
// error naming it, decisions D24), else the token file — created when
// create is true (the process that serves), only read otherwise.
// service.auth: none gives "".
func OperatorToken(cfg *config.Config, getenv func(string) string, create bool) (string, error) {
	if cfg.Service.AuthOff() {
		return "", nil
	}
	if env := cfg.Service.TokenEnv; env != "" {
		token := getenv(env)
		if token == "" {
			return "", loop.Invalid("service.tokenEnv names %s, but that variable is empty or unset; export the token or remove service.tokenEnv", env)
		}
		return token, nil
	}
	if create {
		return EnsureTokenFile(cfg.StateDir())
	}
	return ReadTokenFile(cfg.StateDir())
}
