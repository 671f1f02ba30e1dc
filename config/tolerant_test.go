package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestLoadTolerant_ReadsWhatItCanOfABrokenFile(t *testing.T) {
	path := filepath.Join("testdata", "broken.yaml")
	if _, err := Load(path); err == nil {
		t.Fatal("strict Load accepted broken.yaml")
	}
	cfg := LoadTolerant(path)
	if cfg.StateRoot != "/srv/loop-state" {
		t.Errorf("StateRoot = %q", cfg.StateRoot)
	}
	if cfg.Routing.Tmux.SocketName != "loop-sock" {
		t.Errorf("SocketName = %q", cfg.Routing.Tmux.SocketName)
	}
	if cfg.Routing.Tmux.ResumeProbeSeconds != 0 {
		t.Errorf("a negative probe is not clamped: %v", cfg.Routing.Tmux.ResumeProbeSeconds)
	}
	if cfg.Standing == nil || !reflect.DeepEqual(cfg.Standing.Names(), []string{"good"}) {
		t.Errorf("Standing = %+v, want the entry that parses", cfg.Standing)
	}
	if cfg.StandingErr == nil {
		t.Error("StandingErr is nil")
	}
	var all []string
	for _, p := range cfg.Problems {
		if loop.ErrorCode(p) != loop.EINVALID {
			t.Errorf("%v: code %q", p, loop.ErrorCode(p))
		}
		all = append(all, p.Error())
	}
	joined := strings.Join(all, "\n")
	mustContain(t, joined,
		"cannot parse the YAML", "version:", "polling.stateFile:", "unknownTopLevel: unknown key",
		"routing.tmux.resumeProbeSeconds:", "standingSessions.sessions[1].name: 'Bad Name'",
		"standingSessions.sessions[2]: name 'good' is already declared at sessions[0]")
	noPointers(t, joined)
}

func TestLoadTolerant_NeverFails(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not YAML at all", "\t:::\n  - ]["},
		{"a list", "- a\n"},
		{"state.root the wrong type", "state:\n  root: [a]\nrouting:\n  tmux: {socketName: s}\n"},
		{"standing block a string", "state: {root: r}\nstandingSessions: nope\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := LoadTolerant(writeConfig(t, tt.body))
			if cfg == nil || cfg.Standing == nil || len(cfg.Problems) == 0 {
				t.Fatalf("cfg = %+v", cfg)
			}
			if cfg.StateRoot == "" {
				t.Error("StateRoot is empty")
			}
		})
	}
	if cfg := LoadTolerant(t.TempDir()); len(cfg.Problems) != 1 || cfg.StateRoot != ".the-loop" {
		t.Errorf("unreadable file: %+v", cfg)
	}
	if cfg := LoadTolerant(""); len(cfg.Problems) != 0 || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("no file: %+v", cfg)
	}
}

func TestLoadTolerant_KeepsSectionsAroundASyntaxError(t *testing.T) {
	cfg := LoadTolerant(writeConfig(t, `state:
  root: kept
channels:
  slack: {enabled: true
routing:
  tmux:
    socketName: kept-too
`))
	if cfg.StateRoot != "kept" || cfg.Routing.Tmux.SocketName != "kept-too" {
		t.Errorf("StateRoot = %q, SocketName = %q", cfg.StateRoot, cfg.Routing.Tmux.SocketName)
	}
	if cfg.Slack.Enabled {
		t.Error("the broken section was read")
	}
}
