package http

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestOpenAPI_StatesFactsNotCitations: the public contract's descriptions
// say what holds, never which issue, decision or section of the original's
// spec it came from (those numbers mean nothing to a reader of the API).
func TestOpenAPI_StatesFactsNotCitations(t *testing.T) {
	data, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	citation := regexp.MustCompile(`(?i)\bissues? #?\d+|\bdecisions? D\d+|\bD\d+[a-z]?\b|§\s*\d|#\d+\b`)
	for i, line := range strings.Split(string(data), "\n") {
		if m := citation.FindString(line); m != "" {
			t.Errorf("openapi.yaml:%d cites %q: state the fact instead\n\t%s", i+1, m, strings.TrimSpace(line))
		}
	}
}
