package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const holderGood = "service:\n  port: 4200\n"

// rewrite replaces the file's bytes and moves its mtime forward, so a change
// within the file system's timestamp granularity is still seen.
func rewrite(t *testing.T, path, body string, bump int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Duration(bump) * time.Second)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func newLoggedHolder(t *testing.T, path string) (*Holder, *bytes.Buffer) {
	t.Helper()
	h, err := NewHolder(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	h.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	return h, &logs
}

func TestHolder_ReReadsTheFileWhenItChanges(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	first := h.Current()
	if first.Service.Port != 4200 {
		t.Fatalf("port %d", first.Service.Port)
	}
	if h.Current() != first {
		t.Fatal("an unchanged file gave a new config")
	}
	rewrite(t, path, "service:\n  port: 4300\n", 1)
	if got := h.Current().Service.Port; got != 4300 {
		t.Fatalf("after the edit: port %d, want 4300", got)
	}
}

func TestHolder_TouchedFileKeepsTheSameConfig(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, logs := newLoggedHolder(t, path)
	first := h.Current()
	rewrite(t, path, holderGood, 1) // same bytes, new mtime: the hash decides
	if h.Current() != first {
		t.Fatal("the same bytes were loaded again")
	}
	if logs.Len() != 0 {
		t.Fatalf("logged on a touch: %s", logs)
	}
}

func TestHolder_BrokenFileKeepsTheLastGoodAndLogsOnce(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, logs := newLoggedHolder(t, path)
	good := h.Current()
	rewrite(t, path, "service:\n  port: not-a-port\n", 1)
	for range 3 {
		if h.Current() != good {
			t.Fatal("a broken file replaced the last good config")
		}
	}
	rewrite(t, path, "service:\n  port: not-a-port\n", 2) // touched, still broken
	h.Current()
	if n := strings.Count(logs.String(), "no longer loads"); n != 1 {
		t.Fatalf("logged the refusal %d times:\n%s", n, logs)
	}
	mustContain(t, logs.String(), "service.port")
	if h.Problem() == nil || !strings.Contains(h.Problem().Error(), "service.port") {
		t.Fatalf("Problem() = %v", h.Problem())
	}
	rewrite(t, path, "service:\n  port: 4301\n", 3)
	if got := h.Current().Service.Port; got != 4301 || h.Problem() != nil {
		t.Fatalf("fixed file: port %d, problem %v", got, h.Problem())
	}
}

func TestHolder_BrokenStandingBlockIsLoaded(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	rewrite(t, path, holderGood+"standingSessions:\n  enabled: true\n  sessions:\n    - name: Bad Name\n", 1)
	cfg := h.Current()
	if cfg.StandingErr == nil || cfg.Service.Port != 4200 {
		t.Fatalf("a standingSessions problem must load and render misconfigured: %+v", cfg.StandingErr)
	}
}

func TestHolder_RemovedFileKeepsTheLastGood(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, logs := newLoggedHolder(t, path)
	good := h.Current()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	first, second := h.Current(), h.Current() // asked twice: logged once
	if first != good || second != good {
		t.Fatal("a removed file replaced the config")
	}
	if n := strings.Count(logs.String(), "is gone"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs)
	}
}

func TestNewHolder_RefusesABrokenFileAndDefaultsWithoutOne(t *testing.T) {
	if _, err := NewHolder(writeConfig(t, "service:\n  port: x\n")); err == nil {
		t.Fatal("a broken file at start must be refused")
	}
	h, err := NewHolder("")
	if err != nil || h.Current().Service.Port != 4114 {
		t.Fatalf("no path: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "cli-config.yaml")
	h, err = NewHolder(missing)
	if err != nil || h.Current().Service.Port != 4114 {
		t.Fatalf("missing file: %v", err)
	}
	rewrite(t, missing, holderGood, 1)
	if got := h.Current().Service.Port; got != 4200 {
		t.Fatalf("a file that appears is read: port %d", got)
	}
}

func TestHolder_ConcurrentCurrent(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if i == 0 && j%10 == 0 {
					_ = os.WriteFile(path, []byte("service:\n  port: 43"+string(rune('0'+j/10))+"0\n"), 0o600)
				}
				if h.Current() == nil {
					t.Error("nil config")
				}
			}
		}()
	}
	wg.Wait()
	rewrite(t, path, "service:\n  port: 4999\n", 100)
	if got := h.Current().Service.Port; got != 4999 {
		t.Fatalf("port %d", got)
	}
}

func BenchmarkHolderCurrent(b *testing.B) {
	h, err := NewHolder(writeConfig(b, holderGood))
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Current()
		}
	})
}

func TestHolder_ReloadRereadsWhateverTheStamp(t *testing.T) {
	p := writeConfig(t, "service: {port: 4200}\n")
	h, err := NewHolder(p)
	if err != nil {
		t.Fatal(err)
	}
	if changed, problem := h.Reload(); changed || problem != nil {
		t.Fatalf("reload of an unchanged file: changed %v, problem %v", changed, problem)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same mtime: only a forced reload sees the new bytes.
	if err := os.WriteFile(p, []byte("service: {port: 4201}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := h.Current().Service.Port; got != 4200 {
		t.Fatalf("Current saw the change without a stamp change: %d", got)
	}
	if changed, problem := h.Reload(); !changed || problem != nil || h.Current().Service.Port != 4201 {
		t.Fatalf("Reload: changed %v, problem %v, port %d", changed, problem, h.Current().Service.Port)
	}
	if err := os.WriteFile(p, []byte("service: {port: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, problem := h.Reload(); changed || problem == nil || h.Current().Service.Port != 4201 {
		t.Fatalf("a broken file: changed %v, problem %v, port %d; want the last good config kept", changed, problem, h.Current().Service.Port)
	}
}
