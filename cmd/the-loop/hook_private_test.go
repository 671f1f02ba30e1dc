package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// hookForms are the two commands a hook runs as: the hook program beside
// the-loop (decisions D37), and `the-loop hook` (older settings files, and
// what the program hands over to).
var hookForms = []string{"the-loop-hook", "the-loop hook"}

// hookCommand is form's command on root for session standing:supervisor.
func hookCommand(form, root string) *exec.Cmd {
	args := []string{"--state-root", root, "--session", "standing:supervisor"}
	cmd := exec.Command(binary, append([]string{"hook"}, args...)...)
	if form == "the-loop-hook" {
		cmd = exec.Command(filepath.Join(filepath.Dir(binary), "the-loop-hook"), args...)
	}
	cmd.Env = append(os.Environ(), "THE_LOOP_CLI_CONFIG=/nonexistent/config.yaml")
	return cmd
}

// eachHookForm runs test once for each of hookForms.
func eachHookForm(t *testing.T, test func(t *testing.T, form string)) {
	for _, form := range hookForms {
		name := "program"
		if form == "the-loop hook" {
			name = "cli"
		}
		t.Run(name, func(t *testing.T) { test(t, form) })
	}
}

// runHook runs form on root with a Notification payload; it checks the
// exit is 0 and returns stderr.
func runHook(t *testing.T, form, root string) string {
	t.Helper()
	cmd := hookCommand(form, root)
	cmd.Stdin = strings.NewReader(notification("some-id", "hello"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", form, err, stderr.String())
	}
	return stderr.String()
}

func spoolCount(t *testing.T, root string) int {
	t.Helper()
	ents, _ := os.ReadDir(hearing.SpoolDir(root))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

func TestHookCommand_SpoolsIntoAPrivateSpool(t *testing.T) {
	eachHookForm(t, func(t *testing.T, form string) {
		root := t.TempDir()
		if out := runHook(t, form, root); out != "" || spoolCount(t, root) != 1 {
			t.Fatalf("stderr %q, %d spool files; want the payload spooled quietly", out, spoolCount(t, root))
		}
		if fi, err := os.Stat(hearing.SpoolDir(root)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("spool dir %v %v", fi, err)
		}
	})
}

func TestHookCommand_RefusesASpoolOthersMayWrite(t *testing.T) {
	eachHookForm(t, func(t *testing.T, form string) {
		root := t.TempDir()
		spool := hearing.SpoolDir(root)
		if err := os.MkdirAll(spool, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(spool, 0o777); err != nil {
			t.Fatal(err)
		}
		out := runHook(t, form, root)
		if !strings.Contains(out, "refusing the hook spool "+spool+":") || !strings.Contains(out, "dropped the standing:supervisor payload") {
			t.Fatalf("stderr %q, want a note naming the spool %s", out, spool)
		}
		if n := spoolCount(t, root); n != 0 {
			t.Fatalf("%d files written into a spool others may write", n)
		}
	})
}

func TestHookCommand_RefusesAStateRootOthersMayWrite(t *testing.T) {
	eachHookForm(t, func(t *testing.T, form string) {
		root := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(root, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(root, 0o757); err != nil {
			t.Fatal(err)
		}
		out := runHook(t, form, root)
		if !strings.Contains(out, "refusing the state root (state.root) "+root+":") {
			t.Fatalf("stderr %q, want a note naming the state root", out)
		}
		if _, err := os.Stat(filepath.Join(root, "spool")); err == nil {
			t.Fatal("the hook wrote into a state root others may write")
		}
	})
}

// The hook posts over the state root's socket and sends no credential
// (the service reads who posts from the kernel); a socket record others
// may write is not followed, nor a socket another uid owns.
func TestHookCommand_PostsOverTheSocketWithoutACredential(t *testing.T) {
	eachHookForm(t, func(t *testing.T, form string) {
		var posts atomic.Int32
		var mu sync.Mutex
		var headers []http.Header
		root := testkit.ShortDir(t)
		sock := filepath.Join(root, sdk.SocketFile)
		serveUnix(t, sock, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			posts.Add(1)
			mu.Lock()
			headers = append(headers, r.Header.Clone())
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}))
		t.Setenv(credential.AgentTokenEnv, "an-agent-credential")
		if out := runHook(t, form, root); out != "" || posts.Load() != 1 {
			t.Fatalf("stderr %q, %d posts; want the payload posted on %s", out, posts.Load(), sock)
		}
		mu.Lock()
		h := headers[0]
		mu.Unlock()
		if got := h.Get("Authorization"); got != "" {
			t.Fatalf("the hook sent Authorization %q over the socket; want no credential", got)
		}
		if got := h.Get("X-The-Loop-Hook-Parents"); got != "" {
			t.Fatalf("the hook sent its parents %q; the service reads them itself", got)
		}
		record := socketRecordPath(root)
		if err := os.MkdirAll(filepath.Dir(record), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(record, []byte(sock+"\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(record, 0o666); err != nil {
			t.Fatal(err)
		}
		out := runHook(t, form, root)
		if posts.Load() != 1 || !strings.Contains(out, "refusing the service socket record "+record+":") {
			t.Fatalf("stderr %q, %d posts; want no post through a record others may write", out, posts.Load())
		}
		if n := spoolCount(t, root); n != 1 {
			t.Fatalf("%d spool files, want the payload spooled instead", n)
		}
		if err := os.Remove(record); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() != 0 {
			t.Skip("the socket of another uid needs root to chown it to nobody (65534)")
		}
		if err := os.Chown(sock, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		runHook(t, form, root)
		if posts.Load() != 1 || spoolCount(t, root) != 2 {
			t.Fatalf("%d posts, %d spool files; want nothing posted to a socket uid 65534 owns", posts.Load(), spoolCount(t, root))
		}
	})
}

// serveUnix serves h on a unix socket at path until the test ends.
func serveUnix(t *testing.T, path string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// slowSink applies a hook, then answers only after the hook command's POST
// has timed out: the service applied it, the command does not know.
type slowSink struct {
	svc   *hearing.Hearer
	delay time.Duration
}

func (s slowSink) ApplyHook(ctx context.Context, root string, d loop.HookDelivery) error {
	err := s.svc.ApplyHook(ctx, root, d)
	time.Sleep(s.delay) // the stimulus: answer only after the command has given up on the POST
	return err
}

// A POST that times out after the service applied it goes to the spool;
// replayed from there it is not applied again: its delivery id was.
func TestHookCommand_APostThatTimedOutAfterItWasAppliedIsNotAppliedAgain(t *testing.T) {
	eachHookForm(t, func(t *testing.T, form string) {
		root := testkit.ShortDir(t)
		db, err := store.Open(filepath.Join(root, "the-loop.db"), store.Options{}) // held, as the service holds it
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *store.Tx) error {
			return tx.PutStanding(&loop.StandingRecord{Name: "supervisor", Harness: "claude", HarnessSessionID: "6ba7b810-9dad-41d1-80b4-00c04fd430c8", Status: loop.StatusRunning})
		}); err != nil {
			t.Fatal(err)
		}
		svc := &hearing.Hearer{DB: db, Events: &lifecycle.Service{DB: db, Source: "service"}, Harness: harness.NewRegistry(harness.ClaudeOptions{}).Lookup}
		cfg := config.Default()
		srv := loophttp.NewServer(loophttp.Options{NoAuth: true, StateRoot: root,
			Hooks:  slowSink{svc: svc, delay: hookPostTimeout + 300*time.Millisecond},
			Config: func() *config.Config { return cfg }})
		ln, err := net.Listen("unix", filepath.Join(root, sdk.SocketFile))
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Shutdown(context.Background())
		cmd := hookCommand(form, root)
		payload, _ := json.Marshal(map[string]any{"session_id": "6ba7b810-9dad-41d1-80b4-00c04fd430c8", "hook_event_name": "UserPromptSubmit", "prompt_id": "p-1", "prompt": "hello"})
		cmd.Stdin = bytes.NewReader(payload)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the-loop hook: %v\n%s", err, out)
		}
		if n := spoolCount(t, root); n != 1 {
			t.Fatalf("%d spool files; want the timed-out POST's payload spooled (the store is held)", n)
		}
		if err := svc.ApplySpool(context.Background(), root); err != nil {
			t.Fatal(err)
		}
		if n := spoolCount(t, root); n != 0 {
			t.Fatalf("%d spool files left after ApplySpool", n)
		}
		var rec *loop.StandingRecord
		var started int
		if err := db.View(func(tx *store.Tx) error {
			if rec, err = tx.Standing("supervisor"); err != nil {
				return err
			}
			evs, err := tx.Events(store.EventQuery{})
			for _, ev := range evs {
				if ev.Event == "standing.turn_started" {
					started++
				}
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(rec.Prompts) != 1 || started != 1 || len(rec.HookIDs) != 1 {
			t.Fatalf("prompts %+v, %d turn_started events, ids %q: want the delivery applied once", rec.Prompts, started, rec.HookIDs)
		}
	})
}
