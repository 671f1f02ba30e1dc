package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/the-loop-dev/the-loop/lifecycle"
)

// runHook runs `the-loop hook` on root with a Notification payload; it
// checks the exit is 0 and returns stderr.
func runHook(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command(binary, "hook", "--state-root", root, "--session", "standing:supervisor")
	cmd.Env = append(os.Environ(), "THE_LOOP_CLI_CONFIG=/nonexistent/config.yaml")
	cmd.Stdin = strings.NewReader(notification("some-id", "hello"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the-loop hook: %v\n%s", err, stderr.String())
	}
	return stderr.String()
}

func spoolCount(t *testing.T, root string) int {
	t.Helper()
	ents, _ := os.ReadDir(lifecycle.SpoolDir(root))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n
}

func TestHookCommand_SpoolsIntoAPrivateSpool(t *testing.T) {
	root := t.TempDir()
	if out := runHook(t, root); out != "" || spoolCount(t, root) != 1 {
		t.Fatalf("stderr %q, %d spool files; want the payload spooled quietly", out, spoolCount(t, root))
	}
	if fi, err := os.Stat(lifecycle.SpoolDir(root)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir %v %v", fi, err)
	}
}

func TestHookCommand_RefusesASpoolOthersMayWrite(t *testing.T) {
	root := t.TempDir()
	spool := lifecycle.SpoolDir(root)
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(spool, 0o777); err != nil {
		t.Fatal(err)
	}
	out := runHook(t, root)
	if !strings.Contains(out, "refusing the hook spool "+spool+":") || !strings.Contains(out, "dropped the standing:supervisor payload") {
		t.Fatalf("stderr %q, want a note naming the spool %s", out, spool)
	}
	if n := spoolCount(t, root); n != 0 {
		t.Fatalf("%d files written into a spool others may write", n)
	}
}

func TestHookCommand_RefusesAStateRootOthersMayWrite(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o757); err != nil {
		t.Fatal(err)
	}
	out := runHook(t, root)
	if !strings.Contains(out, "refusing the state root (state.root) "+root+":") {
		t.Fatalf("stderr %q, want a note naming the state root", out)
	}
	if _, err := os.Stat(filepath.Join(root, "spool")); err == nil {
		t.Fatal("the hook wrote into a state root others may write")
	}
}

func TestHookCommand_DoesNotPostToAnAddressOthersMayHaveWritten(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	root := t.TempDir()
	addr := serviceAddrPath(root)
	if err := os.MkdirAll(filepath.Dir(addr), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(addr, []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Private: the hook posts there (the agent's credential goes with it).
	if out := runHook(t, root); out != "" || posts.Load() != 1 {
		t.Fatalf("stderr %q, %d posts; want the private address used", out, posts.Load())
	}
	if err := os.Chmod(addr, 0o666); err != nil {
		t.Fatal(err)
	}
	out := runHook(t, root)
	if posts.Load() != 1 || !strings.Contains(out, "refusing the service address file "+addr+":") {
		t.Fatalf("stderr %q, %d posts; want no post to an address others may write", out, posts.Load())
	}
	if n := spoolCount(t, root); n != 1 {
		t.Fatalf("%d spool files, want the payload spooled instead", n)
	}
}
