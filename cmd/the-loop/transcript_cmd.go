package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// StandingTranscriptCmd is `the-loop standing transcript NAME [--last N] [--format text|json]`.
type StandingTranscriptCmd struct {
	Name   string `arg:"" help:"The session."`
	Last   int    `default:"20" help:"How many entries, the newest ones (1 to 1000)."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run prints the conversation: JSON as it came (a list of {role, text,
// at, usage}), text with terminal controls escaped. It is read by the
// service when it answers — the agents it spawned inherited its
// CLAUDE_CONFIG_DIR — else in this process, with this process's.
func (c *StandingTranscriptCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Transcript(ctx, c.Name, c.Last)
	if err != nil {
		return err
	}
	if res.Entries == nil {
		res.Entries = []loop.TranscriptEntry{}
	}
	if c.Format == "json" {
		return writeJSON(a.Stdout, res.Entries)
	}
	renderTranscript(a.Stdout, a.Stderr, res)
	return nil
}

// prepare refuses a --last out of range before anything is loaded.
func (c *StandingTranscriptCmd) prepare(*App) error {
	if c.Last < 1 || c.Last > lifecycle.MaxTranscriptLast {
		return loop.Invalid("--last %d is out of range: ask for 1 to %d entries", c.Last, lifecycle.MaxTranscriptLast)
	}
	return nil
}

// renderTranscript writes each entry as a header line (role, time, an
// answer's tokens) and its text, a blank line between entries, in one
// write; no entries is a note on stderr.
func renderTranscript(stdout, stderr io.Writer, res loop.TranscriptResult) {
	if len(res.Entries) == 0 {
		fmt.Fprintf(stderr, "(no transcript entries for standing session '%s' yet)\n", termSafe(res.Name))
		return
	}
	var b strings.Builder
	for i, e := range res.Entries {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "── %s", termSafe(e.Role))
		if !e.At.IsZero() {
			fmt.Fprintf(&b, " · %s", e.At.UTC().Format("2006-01-02 15:04:05Z"))
		}
		if u := e.Usage; u != nil {
			fmt.Fprintf(&b, " · %d in, %d out, %d cache read, %d cache write tokens", u.Input, u.Output, u.CacheRead, u.CacheWrite)
		}
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(termLines(e.Text), "\n"))
		b.WriteString("\n")
	}
	_, _ = io.WriteString(stdout, b.String())
}
