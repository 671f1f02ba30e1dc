package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
)

// refused checks that err refuses path (EINVALID, the message naming it
// and its remedy).
func refused(t *testing.T, err error, path, remedy string) {
	t.Helper()
	if err == nil || loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), remedy) {
		t.Fatalf("got %v, want an EINVALID refusal naming %s with %q", err, path, remedy)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestSpoolHook_RefusesASpoolOthersMayWrite(t *testing.T) {
	payload := loop.HookDelivery{Session: "standing:supervisor", Payload: []byte(`{"hook_event_name":"Stop","session_id":"x"}`)}
	for _, c := range []struct{ name, dir string }{
		{"the spool", "spool/hooks"},
		{"the directory above it", "spool"},
		{"the state root", "."},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(SpoolDir(root), 0o700); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(root, c.dir)
			chmod(t, bad, 0o777)
			refused(t, SpoolHook(root, payload), filepath.Clean(bad), "chmod go-w")
			if names, _, _ := spoolFiles(root); len(names) != 0 {
				t.Fatalf("%d files written into a refused spool", len(names))
			}
		})
	}
}

func TestSpoolHook_RefusesASpoolAnotherUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	root := t.TempDir()
	if err := os.MkdirAll(SpoolDir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(SpoolDir(root), 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	err := SpoolHook(root, loop.HookDelivery{Session: "standing:supervisor", Payload: []byte(`{"hook_event_name":"Stop"}`)})
	refused(t, err, SpoolDir(root), "owned by uid 65534")
}

func TestApplySpool_LeavesARefusedSpoolAloneButHearsLiveHooks(t *testing.T) {
	w := newHookWorld(t)
	root := w.cfg.StateDir()
	data, _ := json.Marshal(map[string]any{"hook_event_name": "Notification", "session_id": w.id, "message": "spooled", "notification_type": "idle_prompt"})
	if err := SpoolHook(root, loop.HookDelivery{Session: "standing:supervisor", Payload: data}); err != nil {
		t.Fatal(err)
	}
	chmod(t, SpoolDir(root), 0o770)
	refused(t, w.s.ApplySpool(context.Background(), root), SpoolDir(root), "chmod go-w")
	// A hook heard directly is applied all the same; the spool stays.
	w.hook(map[string]any{"hook_event_name": "Notification", "message": "live", "notification_type": "idle_prompt"})
	if _, err := w.s.ListStanding(context.Background(), w.cfg); err != nil {
		t.Fatalf("a list with a refused spool: %v", err)
	}
	var got []string
	for _, ev := range w.heardEvents() {
		got = append(got, fmt.Sprint(ev.Event, ":", ev.Field("message")))
	}
	if len(got) != 1 || got[0] != "standing.attention:live" {
		t.Fatalf("events %v, want only the live hook's", got)
	}
	if names, _, _ := spoolFiles(root); len(names) != 1 {
		t.Fatalf("%d spool files, want the refused one kept", len(names))
	}

	// A private spool again, but its file writable by others: refused too.
	chmod(t, SpoolDir(root), 0o700)
	names, _, _ := spoolFiles(root)
	file := filepath.Join(SpoolDir(root), names[0])
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	refused(t, w.s.ApplySpool(context.Background(), root), file, "chmod go-w")
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.s.ApplySpool(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	if n := len(w.heardEvents()); n != 2 {
		t.Fatalf("%d events once the spool is private, want the spooled payload applied", n)
	}
}

func TestStart_RefusesHookSettingsOthersMayWrite(t *testing.T) {
	for _, c := range []struct {
		name string
		bad  func(root string) string
	}{
		{"its directory", func(root string) string {
			dir := filepath.Dir(HookSettingsPath(root, "loop-standing-supervisor"))
			chmod(t, dir, 0o777)
			return dir
		}},
		{"the file", func(root string) string {
			path := HookSettingsPath(root, "loop-standing-supervisor")
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
