package main

import (
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestReadText_RefusesAMessageOverTheLimit: a message of exactly the limit
// is read whole; one byte more is EINVALID naming the limit.
func TestReadText_RefusesAMessageOverTheLimit(t *testing.T) {
	if got, err := readText(strings.NewReader("12345"), 5); err != nil || got != "12345" {
		t.Fatalf("at the limit: %q %v", got, err)
	}
	_, err := readText(strings.NewReader("123456"), 5)
	if loop.ErrorCode(err) != loop.EINVALID || !strings.Contains(loop.ErrorMessage(err), "larger than 5 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
}
