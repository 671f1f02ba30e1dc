package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/lifecycle/engine"
)

func TestStart_RefusesHookSettingsOthersMayWrite(t *testing.T) {
	for _, c := range []struct {
		name string
		bad  func(root string) string
	}{
		{"its directory", func(root string) string {
			dir := filepath.Dir(engine.HookSettingsPath(root, "loop-standing-supervisor"))
			chmod(t, dir, 0o777)
			return dir
		}},
		{"the file", func(root string) string {
			path := engine.HookSettingsPath(root, "loop-standing-supervisor")
			chmod(t, filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o622); err != nil {
				t.Fatal(err)
			}
			return path
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newFakeRunner()
			s := newTestService(t, r)
			s.HookBinary = "/bin/the-loop"
			cfg := testConfig(t, "supervisor")
			cfg.StateRoot = t.TempDir()
			bad := c.bad(cfg.StateDir())
			res, err := s.StartStanding(context.Background(), cfg, "supervisor", false)
			if err == nil && res.OK {
				t.Fatalf("started with %s writable by others: %+v", bad, res)
			}
			if msg := fmt.Sprintf("%+v %v", res, err); !strings.Contains(msg, "refusing the") || !strings.Contains(msg, bad+":") {
				t.Fatalf("the failure %s does not name %s", msg, bad)
			}
			if len(r.Spawns) != 0 {
				t.Fatalf("spawned %+v", r.Spawns)
			}
		})
	}
}

func TestStart_RefusesAnMCPConfigDirOthersMayWrite(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	s.HookBinary = "/bin/the-loop"
	cfg := testConfig(t, "alpha")
	cfg.StateRoot = t.TempDir()
	cfg.StandingMCP = true
	dir := filepath.Dir(credential.MCPConfigPath(cfg, "loop-standing-alpha"))
	chmod(t, dir, 0o777)
	res, err := s.StartStanding(context.Background(), cfg, "", false)
	if err == nil && res.OK {
		t.Fatalf("started with %s writable by others: %+v", dir, res)
	}
	if msg := fmt.Sprintf("%+v %v", res, err); !strings.Contains(msg, "refusing the directory of the MCP config file") || !strings.Contains(msg, dir+":") {
		t.Fatalf("the failure %s does not name %s", msg, dir)
	}
	if len(r.Spawns) != 0 {
		t.Fatalf("spawned %+v", r.Spawns)
	}
}
