package sdk

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// shortDir is a temporary directory whose socket paths fit a socket
// address (t.TempDir() is named after the test).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// TestLocal_TalksOverTheRecordedSocketWithoutAToken: Local finds the
// socket the state root records (else <root>/service.sock) and sends no
// Authorization even when WithToken gives one.
func TestLocal_TalksOverTheRecordedSocketWithoutAToken(t *testing.T) {
	root := shortDir(t)
	sock := filepath.Join(root, "elsewhere.sock")
	var mu sync.Mutex
	var auth []string
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if got := LocalSocket(root); got != filepath.Join(root, SocketFile) {
		t.Fatalf("LocalSocket without a record: %s", got)
	}
	if err := os.MkdirAll(filepath.Join(root, "local"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, SocketRecordFile), []byte(sock+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, err := Local(root, WithToken("the-operators-token")).Standing.List(t.Context())
	if err != nil || len(rows) != 0 {
		t.Fatalf("list over the socket: %v %v", rows, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth[0] != "" {
		t.Fatalf("Authorization sent over the socket: %q", auth)
	}
}

// TestSocket_RefusesWhatIsNotTheUsersSocket: a missing socket is "not
// running"; a file that is not a socket, or a socket of another uid, is
// refused before anything is sent.
func TestSocket_RefusesWhatIsNotTheUsersSocket(t *testing.T) {
	dir := shortDir(t)
	_, err := Socket(filepath.Join(dir, "none.sock")).Standing.List(t.Context())
	var nr *NotRunningError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "none.sock") {
		t.Fatalf("a missing socket: %v, want not running naming it", err)
	}
	file := filepath.Join(dir, "file.sock")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var owner *SocketOwnerError
	if _, err := Socket(file).Standing.List(t.Context()); !errors.As(err, &owner) || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("a plain file: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a socket of another uid needs root to chown it to nobody (65534)")
	}
	sock := filepath.Join(dir, "theirs.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	if err := os.Chown(sock, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Socket(sock).Standing.List(t.Context()); !errors.As(err, &owner) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("a socket of uid 65534: %v", err)
	}
	_ = ln.Close()
	<-done // a connection made would have been accepted by now
	select {
	case <-accepted:
		t.Fatal("the client connected to another uid's socket")
	default:
	}
}
