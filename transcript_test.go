package loop_test

import (
	"encoding/json"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

func TestTranscriptEntry_JSONShape(t *testing.T) {
	e := loop.TranscriptEntry{Role: loop.RoleAssistant, Text: "hi", At: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Usage: &loop.TokenUsage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}}
	b, _ := json.Marshal(e)
	want := `{"role":"assistant","text":"hi","at":"2026-12-01T10:00:00Z","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4}}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(loop.TranscriptEntry{Role: loop.RoleUser, Text: "q"})
	if want := `{"role":"user","text":"q","at":"0001-01-01T00:00:00Z"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func TestTokenUsage_Add(t *testing.T) {
	got := loop.TokenUsage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}.Add(loop.TokenUsage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40})
	if want := (loop.TokenUsage{Input: 11, Output: 22, CacheRead: 33, CacheWrite: 44}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
