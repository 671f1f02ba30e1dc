package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestShapes_EachCredentialShapeIsRedacted(t *testing.T) {
	tests := []struct{ secret, keep string }{
		{"sk-ant-api03-" + strings.Repeat("A", 20), ""},
		{"sk-" + strings.Repeat("b", 20), ""},
		{"sk-proj-" + strings.Repeat("c_-", 7), ""},
		{"xoxb-123456789-abcdef", ""},
		{"xoxp-" + strings.Repeat("9", 10), ""},
		{"ghp_" + strings.Repeat("Z", 36), ""},
		{"gho_" + strings.Repeat("1", 40), ""},
		{"github_pat_" + strings.Repeat("a_", 11), ""},
		{"AKIA" + strings.Repeat("Q7", 8), ""},
	}
	for _, tt := range tests {
		in := "before " + tt.secret + " after"
		if got := Shapes(in); got != "before "+Mark+" after" {
			t.Errorf("Shapes(%q) = %q", in, got)
		}
	}
	for _, keep := range []string{"sk-short", "xoxb-123", "ghp_short", "AKIAshort", "the-loop sk- key", "risk-assessment-of-the-plan"} {
		if got := Shapes(keep); got != keep {
			t.Errorf("Shapes(%q) = %q, want it kept", keep, got)
		}
	}
}

func TestRedactor_ValuesNamedAndLiveAreRedacted(t *testing.T) {
	env := "s3cr3t-from-the-env"
	r := New(func() []string { return []string{env, "short"} })
	r.SetValue("service.token", "0123token-file-value")
	got := r.String("a " + env + " b 0123token-file-value c short")
	if got != "a "+Mark+" b "+Mark+" c short" {
		t.Fatalf("String = %q", got)
	}
	r.SetValue("service.token", "")
	if got := r.String("0123token-file-value"); got != "0123token-file-value" {
		t.Fatalf("a forgotten value is still redacted: %q", got)
	}
}

func TestRedactor_AValueInsideJSONIsRedacted(t *testing.T) {
	r := New(nil)
	r.SetValue("service.token", `tok"with\quote<`)
	if got := r.String(`{"text":"tok\"with\\quote\u003c"}`); got != `{"text":"`+Mark+`"}` {
		t.Fatalf("String = %q", got)
	}
}

func TestRedactor_OnlyALiveCredentialsHexRunIsRedacted(t *testing.T) {
	cred := strings.Repeat("ab12", 16)
	other := strings.Repeat("cd34", 16)
	sum := sha256.Sum256([]byte(cred))
	r := New(nil)
	r.AddCredential(hex.EncodeToString(sum[:]))
	got := r.String("mine " + cred + " theirs " + other + " hash " + hex.EncodeToString(sum[:]))
	if want := "mine " + Mark + " theirs " + other + " hash " + hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}

func TestRedactor_NilRedactsShapes(t *testing.T) {
	var r *Redactor
	if got := r.String("key sk-" + strings.Repeat("x", 24)); got != "key "+Mark {
		t.Fatalf("nil String = %q", got)
	}
}

func TestRedactor_LoggerRedactsMessageAttrsGroupsAndErrors(t *testing.T) {
	var buf bytes.Buffer
	r := New(func() []string { return []string{"operator-token-1"} })
	log := r.Logger(slog.New(slog.NewTextHandler(&buf, nil)))
	log.With("pre", "operator-token-1").Info("posted operator-token-1",
		"text", "operator-token-1", "err", errors.New("bad operator-token-1"),
		slog.Group("g", "inner", "operator-token-1"), "list", []string{"operator-token-1"})
	out := buf.String()
	if strings.Contains(out, "operator-token-1") || strings.Count(out, Mark) != 6 {
		t.Fatalf("log line %q", out)
	}
}
