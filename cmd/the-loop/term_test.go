package main

import (
	"strings"
	"testing"
)

// TestTermSafe_EscapesWhatATerminalActsOn: C0, DEL, C1, bidi
// controls and invalid UTF-8 come out as visible escapes; plain text,
// backslashes and other Unicode pass unchanged.
func TestTermSafe_EscapesWhatATerminalActsOn(t *testing.T) {
	cases := map[string]string{
		"plain /home/ops/acme café ❯":    "plain /home/ops/acme café ❯",
		"\x1b]52;c;aGk=\x07":             `\x1b]52;c;aGk=\x07`,
		"a\nb\tc\rd":                     `a\nb\tc\rd`,
		"del\x7f":                        `del\x7f`,
		"csi\u009b2J":                    `csi\u009b2J`,
		"\u202eevil\u202c \u2066x\u2069": `\u202eevil\u202c \u2066x\u2069`,
		"marks\u200e\u200f\u061c":        `marks\u200e\u200f\u061c`,
		"bad\xffutf8":                    `bad\xffutf8`,
		`C:\path\x1b`:                    `C:\path\x1b`,
	}
	for in, want := range cases {
		if got := termSafe(in); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := termLines("line one\n\tline two\x1b[2J"); got != "line one\n\tline two\\x1b[2J" {
		t.Errorf("termLines = %q", got)
	}
	for _, s := range []string{termSafe("\x1b\x9b\u202e"), termLines("\x1b\n\u009b")} {
		if strings.ContainsAny(s, "\x1b\u009b\u202e") {
			t.Errorf("%q still holds a control", s)
		}
	}
}

// TestWriteTable_AlignsEscapedCells: a cell is measured after escaping, so
// the columns still line up.
func TestWriteTable_AlignsEscapedCells(t *testing.T) {
	var b strings.Builder
	writeTable(&b, [][]string{{"A", "B"}, {"x\x1b", "y"}, {"long-one", "z"}})
	want := "A         B\nx\\x1b     y\nlong-one  z\n"
	if b.String() != want {
		t.Fatalf("table:\n%q\nwant\n%q", b.String(), want)
	}
}
