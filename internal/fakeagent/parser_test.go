//go:build linux

package main

import (
	"reflect"
	"sync/atomic"
	"testing"
)

func feedAll(p *parser, in string) []string {
	var out []string
	for i := 0; i < len(in); i++ {
		if m, ok := p.feed(in[i]); ok {
			out = append(out, m)
		}
	}
	return out
}

func TestParser_BracketedPasteThenCarriageReturnIsOneMessage(t *testing.T) {
	var p parser
	got := feedAll(&p, "\x1b[200~line one\rline two\nend\x1b[201~\r")
	if want := []string{"line one\nline two\nend"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParser_TypedCharactersAccumulateAndEmptySubmitsAreIgnored(t *testing.T) {
	var p parser
	got := feedAll(&p, "\r\rhelo\x7flo\x1b[A\r")
	if want := []string{"hello"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParser_AnEndMarkerInsideThePasteEndsIt(t *testing.T) {
	var p parser
	got := feedAll(&p, "\x1b[200~one\x1b[201~two\rthree\x1b[201~\r")
	if want := []string{"onetwo", "three"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q (why say text must be sanitised)", got, want)
	}
}

func TestParseArgs(t *testing.T) {
	cases := []struct {
		argv []string
		want args
	}{
		{[]string{"--session-id", "s1", "--model", "opus", "do it;"}, args{sessionID: "s1", prompt: "do it;", model: "opus"}},
		{[]string{"--resume", "r1", "again"}, args{sessionID: "r1", resume: true, prompt: "again"}},
		{[]string{"--resume=r2"}, args{sessionID: "r2", resume: true}},
		{[]string{"--session-id", "s2", "--settings", "/a.json", "--settings={}", "--model=m", "--permission-mode", "plan", "--", "-dash", "--x"},
			args{sessionID: "s2", prompt: "--x", settings: []string{"/a.json", "{}"}, model: "m", permissionMode: "plan"}},
		{[]string{"--dangerously-skip-permissions", "--", "-p"}, args{prompt: "-p", permissionMode: "bypassPermissions"}},
	}
	for _, c := range cases {
		if got := parseArgs(c.argv); !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseArgs(%q) = %+v, want %+v", c.argv, got, c.want)
		}
	}
}

func TestParseArgs_EverythingAfterDoubleDashIsThePrompt(t *testing.T) {
	got := parseArgs([]string{"--session-id", "x", "--allowedTools", "Read", "Grep", "--", "---\nfront: matter"})
	if got.sessionID != "x" || got.prompt != "---\nfront: matter" {
		t.Fatalf("parsed %+v; want session x and the prompt after --", got)
	}
	if got := parseArgs([]string{"--resume", "y", "--", "-p"}); !got.resume || got.prompt != "-p" {
		t.Fatalf("parsed %+v; want a resume of y with prompt -p", got)
	}
}

func TestParseArgs_VariadicOptionsSwallowAPromptWithoutDoubleDash(t *testing.T) {
	if got := parseArgs([]string{"--session-id", "x", "--allowedTools", "Read", "Grep", "the prompt"}); got.prompt != "" {
		t.Fatalf("prompt %q: the fake should swallow it as Claude Code does", got.prompt)
	}
	if got := parseArgs([]string{"--session-id", "x", "---\nfront"}); got.prompt != "" {
		t.Fatalf("prompt %q: a dash-led prompt without -- is a flag to Claude Code", got.prompt)
	}
}

func TestParser_SwallowedReturnsKeepTheTextPending(t *testing.T) {
	p := parser{swallow: 2}
	var kinds []inputKind
	for _, b := range []byte("\x1b[200~hi\x1b[201~\r\r\r\r") {
		if in := p.feedEvent(b); in.kind != inputNone {
			kinds = append(kinds, in.kind)
			if in.kind == inputSwallowed && in.text != "hi" {
				t.Fatalf("swallowed with pending %q", in.text)
			}
			if in.kind == inputSubmit && in.text != "hi" {
				t.Fatalf("submitted %q", in.text)
			}
		}
	}
	if want := []inputKind{inputSwallowed, inputSwallowed, inputSubmit, inputEmpty}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
}

func TestParser_InKeyModeKeysAreEventsAndAPasteIsDroppedWhole(t *testing.T) {
	var keys atomic.Bool
	p := parser{keys: &keys}
	feedAll(&p, "draft")
	keys.Store(true)
	var got []input
	for _, chunk := range []string{"1", "\x1b[B", "\r", "\x1b[200~say this\rplease\x1b[201~", "\r", "\x1b"} {
		for i := 0; i < len(chunk); i++ {
			if in := p.feedEvent(chunk[i]); in.kind != inputNone {
				got = append(got, in)
			}
		}
		if in := p.endOfRead(); in.kind != inputNone {
			got = append(got, in)
		}
	}
	want := []input{{kind: inputKey, text: "1"}, {kind: inputKey, text: "down"}, {kind: inputKey, text: "enter"},
		{kind: inputIgnored, text: "say this\nplease"}, {kind: inputKey, text: "enter"}, {kind: inputKey, text: "escape"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	keys.Store(false)
	if got := feedAll(&p, " more\r"); !reflect.DeepEqual(got, []string{"draft more"}) {
		t.Fatalf("after the dialog: %q, want the text typed before it to be still pending", got)
	}
}
