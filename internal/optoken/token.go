// Package optoken is the operator's credential on this host: the token
// file under the state root, where the token lives, and what the process
// that binds the service refuses (decisions D24). It links none of the
// service's libraries, so the CLI reads and rotates the token without
// them (decisions D37).
package optoken

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/sdk"
)

// tokenBytes is the operator token's size: 256 random bits, hex-encoded.
const tokenBytes = 32

// TokenSource names where the operator's token lives, for messages: the
// variable service.tokenEnv names, or the token file.
func TokenSource(cfg *config.Config) string {
	if cfg.Service.TokenEnv != "" {
		return "$" + cfg.Service.TokenEnv + " (service.tokenEnv)"
	}
	return sdk.TokenPath(cfg.StateDir())
}

// EnsureStateRoot creates the state root 0700 when it is missing and
// refuses one the ownership rules refuse (fileperm.Check) or that group or
// others may write; a group write bit for the owner's own group is dropped
// first (fileperm.DropGroupWrite).
func EnsureStateRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot create the state root %s (state.root): %w", dir, err)
	}
	if err := fileperm.Check(dir, "state root (state.root)"); err != nil {
		return err
	}
	if err := fileperm.DropGroupWrite(dir); err != nil {
		return err
	}
	return fileperm.CheckPrivate(dir, "state root (state.root)")
}

// EnsureTokenFile returns the operator's token from the state root,
// creating the state root (0700) and the token file (0600, 256 random
// bits) at the first start. An existing file is kept, across restarts.
func EnsureTokenFile(stateDir string) (string, error) {
	if err := EnsureStateRoot(stateDir); err != nil {
		return "", err
	}
	token, err := sdk.ReadTokenFile(stateDir)
	if err == nil {
		return token, nil
	}
	if _, serr := os.Stat(sdk.TokenPath(stateDir)); !errors.Is(serr, fs.ErrNotExist) {
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
	path := sdk.TokenPath(stateDir)
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
			return sdk.ReadTokenFile(stateDir) // another process made it first
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
	return sdk.ReadTokenFile(cfg.StateDir())
}

// CheckServe is what the process that binds service.host:service.port
// (`the-loop serve`, and `the-loop start` before it spawns one) refuses
// (decisions D24; exit 2): a host beyond loopback without service.exposed,
// service.auth: none with service.exposed, and a service.tokenEnv whose
// variable getenv finds empty. It returns the bearer token service.tokenEnv
// names ("" when it is not set: the token file is then the token, see
// OperatorToken).
func CheckServe(svc config.Service, getenv func(string) string) (string, error) {
	if !isLoopback(svc.Host) && !svc.Exposed {
		return "", loop.Invalid("refusing to bind service.host %s beyond loopback without service.exposed: true; "+
			"set service.host to 127.0.0.1, or set service.exposed: true and protect the API (service.tokenEnv, or an auth-terminating gateway): it can spawn agent sessions", svc.Host)
	}
	if svc.AuthOff() && svc.Exposed {
		return "", loop.Invalid("refusing service.auth: none together with service.exposed: true: a service reachable from other hosts must ask for a credential; set service.auth: token, or service.exposed: false")
	}
	if svc.TokenEnv == "" {
		return "", nil
	}
	token := getenv(svc.TokenEnv)
	if token == "" {
		return "", loop.Invalid("service.tokenEnv names %s, but that variable is empty or unset; export the token or remove service.tokenEnv", svc.TokenEnv)
	}
	return token, nil
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
