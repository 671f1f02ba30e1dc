package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/the-loop-dev/the-loop/config"
)

// TestLockPID_ProbesNeverMakeTheServiceRefuse: servicePID
// probes the pid file with a shared lock; a service taking its exclusive
// lock meanwhile must wait the instant out, not refuse with "already
// running (pid 0)". A real holder is still refused, named by its pid.
func TestLockPID_ProbesNeverMakeTheServiceRefuse(t *testing.T) {
	cfg := config.Default()
	cfg.StateRoot = t.TempDir()
	path := pidPath(cfg)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					servicePID(cfg)
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 300 {
		l, err := lockPID(path)
		if err != nil {
			t.Fatalf("take %d: %v (a probe made the service refuse)", i, err)
		}
		l.release()
	}

	l, err := lockPID(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if pid := servicePID(cfg); pid != os.Getpid() {
		t.Fatalf("servicePID = %d, want the holder %d", pid, os.Getpid())
	}
	if _, err := lockPID(path); err == nil || !strings.Contains(err.Error(), "already running for this state root (pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lockPID: %v", err)
	}
}
