package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Human-readable output escapes what a terminal would act on:
// fields stored from REST (cwd, description, actor) and agent output reach
// the operator's terminal, and an OSC 52 sequence there writes the
// clipboard. Every text renderer passes what it prints through termSafe (a
// table cell, a name, a detail) or termLines (a message that may span
// lines); JSON output never does, so it stays exact.

// termSafe returns s with every C0 control (newline and tab included), DEL,
// C1 control, bidi control and invalid UTF-8 byte written as a visible Go
// escape (\n, \t, \x1b, \u009b, \u202e); everything else, backslashes
// included, is unchanged.
func termSafe(s string) string { return termEscape(s, false) }

// termLines is termSafe keeping newlines and tabs: for a message whose
// line breaks are its own.
func termLines(s string) string { return termEscape(s, true) }

func termEscape(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether termEscape would change s (the common case,
// plain text, is returned as is without a copy).
func needsEscape(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			return true
		case keepLines && (r == '\n' || r == '\t'):
		case r < 0x20 || r == 0x7f || unsafeRune(r):
			return true
		}
	}
	return false
}

// unsafeRune reports a C1 control (U+0080–U+009F) or a bidi control: the
// embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069, and
// the marks U+200E, U+200F and U+061C.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}
