package config

import (
	"slices"
	"testing"
)

// TestLoad_ControlKeywords reads routing.control.keywords: the original's
// defaults, a keyword renamed, and one disabled with "".
func TestLoad_ControlKeywords(t *testing.T) {
	defaults := []string{"the-loop start", "the-loop stop", "the-loop pause", "the-loop resume",
		"the-loop execute", "the-loop contribute", "the-loop do", "the-loop cleanup"}
	if got := Default().Routing.ControlKeywords; !slices.Equal(got, defaults) {
		t.Fatalf("defaults %q", got)
	}
	cfg, err := Load(writeConfig(t, "routing:\n  control:\n    keywords: {stop: 'loop halt', do: ''}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"the-loop start", "loop halt", "the-loop pause", "the-loop resume",
		"the-loop execute", "the-loop contribute", "the-loop cleanup"}
	if got := cfg.Routing.ControlKeywords; !slices.Equal(got, want) {
		t.Fatalf("keywords %q, want %q", got, want)
	}
}
