package optoken

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/sdk"
)

func TestCheckServe_AuthNoneWithExposedIsRefused(t *testing.T) {
	svc := config.Default().Service
	svc.Auth, svc.Exposed, svc.Host = config.AuthNone, true, "0.0.0.0"
	_, err := CheckServe(svc, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "service.auth: none") || !strings.Contains(err.Error(), "service.exposed: true") {
		t.Fatalf("CheckServe: %v", err)
	}
}

func TestTokenFile_CreatedPrivateAndKept(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	tok, err := EnsureTokenFile(root)
	if err != nil || len(tok) < 32 {
		t.Fatalf("EnsureTokenFile: %q %v", tok, err)
	}
	for path, want := range map[string]os.FileMode{root: 0o700, sdk.TokenPath(root): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %o", path, fi.Mode(), err, want)
		}
	}
	if again, err := EnsureTokenFile(root); err != nil || again != tok {
		t.Fatalf("a second start: %q %v, want the same token", again, err)
	}
	if read, err := sdk.ReadTokenFile(root); err != nil || read != tok {
		t.Fatalf("ReadTokenFile: %q %v", read, err)
	}
	rotated, err := RotateTokenFile(root)
	if err != nil || rotated == tok || len(rotated) != len(tok) {
		t.Fatalf("rotate: %q %v", rotated, err)
	}
	if fi, _ := os.Stat(sdk.TokenPath(root)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("rotated file mode %v", fi.Mode())
	}
}

func TestTokenFile_OthersMayNotReadOrWrite(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	if _, err := EnsureTokenFile(root); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sdk.TokenPath(root), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(string) (string, error){EnsureTokenFile, sdk.ReadTokenFile} {
		if _, err := f(root); err == nil || !strings.Contains(err.Error(), sdk.TokenPath(root)) || !strings.Contains(err.Error(), "0644") {
			t.Fatalf("a 0644 token file: %v", err)
		}
	}
	if err := os.Chmod(sdk.TokenPath(root), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureTokenFile(root); err == nil || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "state root") {
		t.Fatalf("a world-writable state root: %v", err)
	}
	if err := EnsureStateRoot(root); err == nil {
		t.Fatal("EnsureStateRoot took a world-writable state root")
	}
	if err := os.Chmod(root, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := fileperm.CheckPrivate(root, "state root"); err == nil {
		t.Fatal("a group-writable state root passed")
	}
}

func TestOperatorToken_FromTheEnvOrTheFile(t *testing.T) {
	cfg := config.Default()
	cfg.StateRoot = filepath.Join(t.TempDir(), "state")
	if _, err := OperatorToken(cfg, os.Getenv, false); err == nil || !strings.Contains(err.Error(), sdk.TokenPath(cfg.StateDir())) {
		t.Fatalf("no file yet: %v", err)
	}
	made, err := OperatorToken(cfg, os.Getenv, true)
	if err != nil {
		t.Fatal(err)
	}
	if read, err := OperatorToken(cfg, os.Getenv, false); err != nil || read != made {
		t.Fatalf("read back: %q %v", read, err)
	}
	cfg.Service.TokenEnv = "THE_LOOP_TEST_OPERATOR_TOKEN"
	if _, err := OperatorToken(cfg, func(string) string { return "" }, true); err == nil || !strings.Contains(err.Error(), "THE_LOOP_TEST_OPERATOR_TOKEN") {
		t.Fatalf("an empty tokenEnv: %v", err)
	}
	if tok, err := OperatorToken(cfg, func(string) string { return "from-env" }, true); err != nil || tok != "from-env" {
		t.Fatalf("tokenEnv: %q %v", tok, err)
	}
	if got := TokenSource(cfg); got != "$THE_LOOP_TEST_OPERATOR_TOKEN (service.tokenEnv)" {
		t.Fatalf("TokenSource %q", got)
	}
	cfg.Service.Auth = config.AuthNone
	if tok, err := OperatorToken(cfg, func(string) string { return "" }, true); err != nil || tok != "" {
		t.Fatalf("auth none: %q %v", tok, err)
	}
}

func TestCheckServe_RefusesWhatWouldBeReachableUnprotected(t *testing.T) {
	env := map[string]string{"SET": "tok", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		name      string
		svc       config.Service
		token     string
		wantNames []string // "" when it serves
	}{
		{"loopback", config.Service{Host: "127.0.0.1"}, "", nil},
		{"localhost", config.Service{Host: "localhost"}, "", nil},
		{"ipv6 loopback", config.Service{Host: "::1"}, "", nil},
		{"another loopback address", config.Service{Host: "127.0.0.2"}, "", nil},
		{"every interface", config.Service{Host: "0.0.0.0"}, "", []string{"service.host", "0.0.0.0", "service.exposed"}},
		{"a LAN address", config.Service{Host: "192.168.1.5"}, "", []string{"service.host", "service.exposed"}},
		{"every interface, exposed", config.Service{Host: "0.0.0.0", Exposed: true}, "", nil},
		{"a token", config.Service{Host: "127.0.0.1", TokenEnv: "SET"}, "tok", nil},
		{"an empty token variable", config.Service{Host: "127.0.0.1", TokenEnv: "EMPTY"}, "", []string{"service.tokenEnv", "EMPTY"}},
		{"an unset token variable", config.Service{Host: "0.0.0.0", Exposed: true, TokenEnv: "UNSET"}, "", []string{"service.tokenEnv", "UNSET"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			token, err := CheckServe(c.svc, getenv)
			if c.wantNames == nil {
				if err != nil || token != c.token {
					t.Fatalf("token %q, err %v", token, err)
				}
				return
			}
			if loop.ErrorCode(err) != loop.EINVALID || token != "" {
				t.Fatalf("token %q, err %v (want an invalid refusal)", token, err)
			}
			for _, n := range c.wantNames {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("%q does not name %s", err, n)
				}
			}
		})
	}
}
