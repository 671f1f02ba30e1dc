package config

import "testing"

// routing.tmux.keepSessionOnClose and killHarnessOnClose: both default to
// true (the original's schema) and are read from the file.
func TestLoad_CloseSettingsOfWorkItemSessions(t *testing.T) {
	d := Default().Routing.Tmux
	if !d.KeepSessionOnClose || !d.KillHarnessOnClose {
		t.Fatalf("defaults keep=%v kill=%v, want both true", d.KeepSessionOnClose, d.KillHarnessOnClose)
	}
	cfg, err := Load(writeConfig(t, "routing:\n  tmux:\n    keepSessionOnClose: false\n    killHarnessOnClose: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tm := cfg.Routing.Tmux; tm.KeepSessionOnClose || tm.KillHarnessOnClose {
		t.Fatalf("read keep=%v kill=%v, want both false", tm.KeepSessionOnClose, tm.KillHarnessOnClose)
	}
	cfg, err = Load(writeConfig(t, "routing:\n  tmux:\n    killHarnessOnClose: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tm := cfg.Routing.Tmux; !tm.KeepSessionOnClose || tm.KillHarnessOnClose {
		t.Fatalf("read keep=%v kill=%v, want true, false", tm.KeepSessionOnClose, tm.KillHarnessOnClose)
	}
}
