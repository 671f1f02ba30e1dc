package sdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
)

// TokenFile is the operator's token file under the state root (used
// unless service.tokenEnv names a variable).
const TokenFile = "service.token"

// TokenEnvVar is the variable the SDK (and an MCP client's wrapper) reads
// the operator's token from when no option gives one.
const TokenEnvVar = "THE_LOOP_TOKEN"

// TokenPath is <stateDir>/service.token.
func TokenPath(stateDir string) string { return filepath.Join(stateDir, TokenFile) }

// checkPrivate refuses a file or directory (what names it in the message)
// that another user owns or that group or others may write; a token file
// (any file holding a secret) must also not be readable by them
// (CheckSecretFile). A path that does not exist passes. It is the SDK's own
// copy of fileperm.CheckPrivate (the rule every other room applies): the
// SDK links only the standard library and the root package, and reads the
// token file itself.
func checkPrivate(path, what string) error {
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

// CheckSecretFile is checkPrivate for a file holding a secret: group and
// others may not read it either.
func CheckSecretFile(path string) error {
	if err := checkPrivate(path, "token file"); err != nil {
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
	if err := checkPrivate(stateDir, "state root (state.root)"); err != nil {
		return "", err
	}
	if err := CheckSecretFile(path); err != nil {
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
