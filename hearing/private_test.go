package hearing

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

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
	refused(t, hearer(w.s).ApplySpool(context.Background(), root), SpoolDir(root), "chmod go-w")
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
	refused(t, hearer(w.s).ApplySpool(context.Background(), root), file, "chmod go-w")
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := hearer(w.s).ApplySpool(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	if n := len(w.heardEvents()); n != 2 {
		t.Fatalf("%d events once the spool is private, want the spooled payload applied", n)
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

func refused(t *testing.T, err error, path, remedy string) {
	t.Helper()
	if err == nil || loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), remedy) {
		t.Fatalf("got %v, want an EINVALID refusal naming %s with %q", err, path, remedy)
	}
}
