// Package redact is the one redactor of the secrets the service holds: it
// replaces them, in every text that leaves the operator's own view (Slack
// posts, the event log, the service log, what MCP returns), with Mark.
// Standard library only.
//
// A Redactor knows three kinds of secret: exact values (the token file's
// value, the values of the variables every *TokenEnv key names), agent
// credentials (a run of 64 hex characters whose sha256 is one a session
// was issued), and the shapes of the credentials an operator or an agent
// is most likely to paste (Shapes).
package redact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mark replaces a secret.
const Mark = "[redacted]"

// MinValue is the length below which an exact value is not redacted: a
// short value would blank ordinary words.
const MinValue = 8

// shapes are the credential shapes every text is scrubbed of: Anthropic
// and OpenAI keys, Slack tokens, GitHub tokens (classic and fine-grained)
// and AWS access key ids, each starting at a word boundary (so "risk-…"
// is no key).
var shapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:sk-ant-[A-Za-z0-9_-]{20,}` +
		`|sk-(?:proj-)?[A-Za-z0-9_-]{20,}` +
		`|xox[abprs]-[A-Za-z0-9-]{10,}` +
		`|gh[pousr]_[A-Za-z0-9]{36,}` +
		`|github_pat_[A-Za-z0-9_]{22,}` +
		`|AKIA[0-9A-Z]{16})`)
})

// hex64 is a run of exactly 64 hex characters, the form of an agent
// credential (32 random bytes), not part of a longer run.
var hex64 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[0-9a-fA-F]{64,}`)
})

// Shapes replaces every credential shape in text with Mark.
func Shapes(text string) string {
	return shapes().ReplaceAllLiteralString(text, Mark)
}

// Redactor redacts the live secrets: values set by name (SetValue), the
// values Values returns at each call (the config in force decides which
// variables are secret), agent credentials by hash (AddCredential), and
// the shapes. Its methods are safe for concurrent use; a nil *Redactor
// redacts the shapes only.
type Redactor struct {
	// Values returns the exact values in force (nil: none); it is called
	// for every text, so it should be cheap.
	Values func() []string

	mu     sync.RWMutex
	named  map[string]string
	hashes map[string]bool
}

// New returns a Redactor whose exact values in force are values().
func New(values func() []string) *Redactor {
	return &Redactor{Values: values}
}

// SetValue records value as the secret named name (the token file's
// value under "service.token"), replacing what name held; "" forgets it.
func (r *Redactor) SetValue(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.named == nil {
		r.named = map[string]string{}
	}
	if value == "" {
		delete(r.named, name)
		return
	}
	r.named[name] = value
}

// AddCredential records hash (the hex sha256 a session's record keeps) as
// an agent credential's: a 64-hex run whose sha256 it is is redacted.
func (r *Redactor) AddCredential(hash string) {
	if hash == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hashes == nil {
		r.hashes = map[string]bool{}
	}
	r.hashes[strings.ToLower(hash)] = true
}

// values is every exact value in force, longest first (a value that holds
// another is replaced whole).
func (r *Redactor) values() []string {
	var out []string
	if r.Values != nil {
		out = append(out, r.Values()...)
	}
	r.mu.RLock()
	for _, v := range r.named {
		out = append(out, v)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// String returns text with every secret replaced by Mark.
func (r *Redactor) String(text string) string {
	if text == "" {
		return text
	}
	if r != nil {
		for _, v := range r.values() {
			if len(v) < MinValue {
				continue
			}
			text = strings.ReplaceAll(text, v, Mark)
			if esc := jsonEscaped(v); esc != v { // the value inside a JSON text
				text = strings.ReplaceAll(text, esc, Mark)
			}
		}
		text = r.credentials(text)
	}
	return Shapes(text)
}

// credentials replaces every 64-hex run whose sha256 is a recorded agent
// credential's.
func (r *Redactor) credentials(text string) string {
	r.mu.RLock()
	n := len(r.hashes)
	r.mu.RUnlock()
	if n == 0 {
		return text
	}
	return hex64().ReplaceAllStringFunc(text, func(run string) string {
		if len(run) != 64 {
			return run
		}
		sum := sha256.Sum256([]byte(run))
		r.mu.RLock()
		live := r.hashes[hex.EncodeToString(sum[:])]
		r.mu.RUnlock()
		if live {
			return Mark
		}
		return run
	})
}

// jsonEscaped is v as it appears inside a JSON string (without quotes).
func jsonEscaped(v string) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 {
		return v
	}
	return string(b[1 : len(b)-1])
}

// Logger returns l with every record's message and attribute values
// redacted (Handler); a nil l is returned as is.
func (r *Redactor) Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(r.Handler(l.Handler()))
}

// Handler wraps h: each record's message and every string (or error, or
// Stringer) attribute value reaches h redacted.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	return &handler{r: r, next: h}
}

type handler struct {
	r    *Redactor
	next slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &handler{r: h.r, next: h.next.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{r: h.r, next: h.next.WithGroup(name)}
}

// attr is a redacted: strings and what prints as one redacted, groups
// member by member.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = h.attr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.r.String(x.String()))
		case []string:
			return slog.Any(a.Key, h.r.Strings(x))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Strings returns a copy of ss with each element redacted.
func (r *Redactor) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}
