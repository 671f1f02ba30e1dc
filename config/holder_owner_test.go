package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// refusals records what a holder's OnRefused hears.
type refusals struct{ got []string }

func (r *refusals) hear(path string, problem error) { r.got = append(r.got, path+": "+problem.Error()) }

// TestHolder_ReloadRefusesAFileOthersMayWrite: a live config made
// writable by others is not reloaded — the last good config stays in use,
// the refusal names the path and the remedy, and OnRefused hears it once;
// made safe again, the file is loaded.
func TestHolder_ReloadRefusesAFileOthersMayWrite(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	var heard refusals
	h.OnRefused(heard.hear)
	good := h.Current()
	rewrite(t, path, "service:\n  port: 4300\n", 1)
	if err := os.Chmod(path, 0o646); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := h.Current(); got != good {
			t.Fatalf("reloaded a file others may write: port %d", got.Service.Port)
		}
	}
	if changed, problem := h.Reload(); changed || problem == nil || !strings.Contains(problem.Error(), "chmod o-w "+path) {
		t.Fatalf("Reload: changed %v, problem %v", changed, problem)
	}
	if len(heard.got) != 1 || !strings.Contains(heard.got[0], path) {
		t.Fatalf("OnRefused heard %q, want one refusal naming %s", heard.got, path)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := h.Current().Service.Port; got != 4300 {
		t.Fatalf("made safe again: port %d, want 4300", got)
	}
	if h.Problem() != nil {
		t.Fatalf("problem after the fix: %v", h.Problem())
	}
}

// TestHolder_ReloadRefusesAFileAnotherUserOwns: chowned to nobody, the
// live config is refused on reload (the last good one stays); the
// refusal names the owner.
func TestHolder_ReloadRefusesAFileAnotherUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root; run the tests as root to check ownership refusals")
	}
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	var heard refusals
	h.OnRefused(heard.hear)
	good := h.Current()
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if h.Current() != good {
		t.Fatal("a file another user owns replaced the config")
	}
	if len(heard.got) != 1 || !strings.Contains(heard.got[0], "uid 65534") {
		t.Fatalf("OnRefused heard %q", heard.got)
	}
}

// TestHolder_ReloadRefusesAStateRootOthersMayWrite: a reload whose
// state.root now names a directory others may write keeps the last good
// config.
func TestHolder_ReloadRefusesAStateRootOthersMayWrite(t *testing.T) {
	path := writeConfig(t, holderGood)
	h, _ := newLoggedHolder(t, path)
	var heard refusals
	h.OnRefused(heard.hear)
	good := h.Current()
	open := filepath.Join(filepath.Dir(path), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, "state:\n  root: "+open+"\n", 1)
	if h.Current() != good {
		t.Fatal("a config whose state root others may write was loaded")
	}
	if len(heard.got) != 1 || !strings.Contains(heard.got[0], open) {
		t.Fatalf("OnRefused heard %q", heard.got)
	}
}

// TestNewHolder_RefusesAnUnsafeFile: the service's first load applies the
// same rules.
func TestNewHolder_RefusesAnUnsafeFile(t *testing.T) {
	path := writeConfig(t, holderGood)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := NewHolder(path); loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(err.Error(), path) {
		t.Fatalf("NewHolder of a 0666 file: %v", err)
	}
}
