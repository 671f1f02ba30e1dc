package main

import (
	"context"
	"fmt"
	"io"

	loop "github.com/the-loop-dev/the-loop"
)

// SessionsCmd groups the work-item session verbs (original §4.2; decisions
// D23: with no GitHub router yet, an operator drives a work item's session
// by hand). They take work-item refs only: a standing ref is refused.
type SessionsCmd struct {
	List  SessionsListCmd  `cmd:"" help:"List work-item sessions (never standing ones)."`
	Start SessionsStartCmd `cmd:"" help:"Start a work item's session, or resume its recorded conversation."`
	Reply SessionsReplyCmd `cmd:"" help:"Paste a reply into a work item's running session (a reply never spawns one)."`
	Close SessionsCloseCmd `cmd:"" help:"Close a work item's session (its harness is ended; its tmux session kept or killed)."`
}

// renderSessions writes the original's table (Work item, Harness, Session
// id, Tmux, Status, Control, Last event) with the hooks' Activity after the
// Status, as standing list has it; with no rows, the header and "(no
// registered sessions)" on stderr.
func renderSessions(stdout, stderr io.Writer, rows []loop.WorkItemRow) {
	or := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	table := [][]string{{"Work item", "Harness", "Session id", "Tmux", "Status", "Activity", "Control", "Last event"}}
	for _, r := range rows {
		last := "-"
		if r.LastEventAt != nil && *r.LastEventAt != "" {
			last = *r.LastEventAt
		}
		activity := r.Activity
		if activity == "" {
			activity = loop.ActivityUnknown
		}
		table = append(table, []string{r.Ref, r.Harness, r.HarnessSessionID, or(r.TmuxTarget), string(r.Status), string(activity), "-", last})
	}
	writeTable(stdout, table)
	if len(rows) == 0 {
		fmt.Fprintln(stderr, "(no registered sessions)")
	}
}

// SessionsListCmd is `the-loop sessions list`.
type SessionsListCmd struct {
	Status string `enum:",active,paused,closed" default:"" help:"Only sessions with this status (active, paused, closed)."`
	Format string `enum:"table,json" default:"table" help:"Output format (table or json)."`
}

// Run lists the sessions.
func (c *SessionsListCmd) Run(ctx context.Context, a *App, api services) error {
	rows, err := api.WorkItems.List(ctx, c.Status)
	if err != nil {
		return err
	}
	if c.Format == "json" {
		if rows == nil {
			rows = []loop.WorkItemRow{}
		}
		return writeJSON(a.Stdout, rows)
	}
	renderSessions(a.Stdout, a.Stderr, rows)
	return nil
}

// SessionsStartCmd is `the-loop sessions start --work-item REF`.
type SessionsStartCmd struct {
	WorkItem   string `name:"work-item" required:"" help:"The work item, e.g. github:octo/repo#15." placeholder:"REF"`
	spawnFlags `kong:"embed,set='recorded=: the recorded one, else',set='brief=boot prompt',set='briefHelp=The boot prompt (default: one naming the work item).'"`
	Slack      bool   `help:"Announce it in Slack (channels.slack.channel) and bind the thread: replies there are recorded on the ticket and reach the session."`
	Format     string `enum:"text,json" default:"text" help:"Output format (text or json)."`

	req loop.WorkItemStartRequest // what prepare made of the flags
}

// prepare makes the request from the flags (the boot prompt read from its
// file, the directory made absolute), refusing a mistake in them.
func (c *SessionsStartCmd) prepare(*App) error {
	prompt, cwd, err := c.spawnFlags.read()
	c.req = loop.WorkItemStartRequest{Ref: c.WorkItem, Harness: c.Harness, Prompt: prompt, Cwd: cwd, Slack: c.Slack}
	return err
}

// Run starts.
func (c *SessionsStartCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.WorkItems.Start(ctx, c.req)
	if err != nil {
		return err
	}
	if c.Format == "json" {
		return a.jsonResult(res, res.ExitCode)
	}
	return a.messages(res.Messages, res.ExitCode)
}

// SessionsReplyCmd is `the-loop sessions reply --work-item REF (--text T |
// --text-file F | --text -)`.
type SessionsReplyCmd struct {
	WorkItem  string `name:"work-item" required:"" help:"The work item whose session gets the reply." placeholder:"REF"`
	talkFlags `kong:"embed,set='talk=reply',set='talker=replying'"`
}

// prepare refuses a --timeout that is no positive duration and reads the
// reply (from standard input with --text -).
func (c *SessionsReplyCmd) prepare(a *App) error { return c.read(a, "reply") }

// Run replies; its result is shown as a say's.
func (c *SessionsReplyCmd) Run(ctx context.Context, a *App, api services) error {
	req := loop.WorkItemReplyRequest{Ref: c.WorkItem, Text: c.text, Actor: c.Actor, Wait: c.Wait, TimeoutSeconds: c.seconds}
	stopped := fmt.Sprintf("stopped waiting for the answer of the session for %s: a reply already pasted stays delivered", termSafe(c.WorkItem))
	return talkVerb(ctx, a, &c.talkFlags, api.WorkItems.Reply, req, func(res *loop.ReplyResult) loop.SayResult {
		res.Messages = noneNil(res.Messages)
		return loop.SayResult{Reply: res.Reply, ExitCode: res.ExitCode, Messages: res.Messages}
	}, stopped)
}

// SessionsCloseCmd is `the-loop sessions close --work-item REF`.
type SessionsCloseCmd struct {
	WorkItem string `name:"work-item" required:"" help:"The work item whose session to close." placeholder:"REF"`
	KeepTmux bool   `name:"keep-tmux" xor:"tmux" help:"Keep the tmux session so its transcript stays readable (default: routing.tmux.keepSessionOnClose)."`
	KillTmux bool   `name:"kill-tmux" xor:"tmux" help:"Kill the tmux session along with the harness."`
	Format   string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run closes.
func (c *SessionsCloseCmd) Run(ctx context.Context, a *App, api services) error {
	var keep *bool
	switch {
	case c.KeepTmux:
		keep = new(bool)
		*keep = true
	case c.KillTmux:
		keep = new(bool)
	}
	res, err := api.WorkItems.Close(ctx, loop.WorkItemCloseRequest{Ref: c.WorkItem, KeepTmux: keep})
	if err != nil {
		return err
	}
	if c.Format == "json" {
		return a.jsonResult(res, res.ExitCode)
	}
	return a.messages(res.Messages, res.ExitCode)
}

// jsonResult writes a verb's result as REST gives it; the exit status is
// code.
func (a *App) jsonResult(v any, code int) error {
	if err := writeJSON(a.Stdout, v); err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// messages prints a verb's lines, each on its stream; the exit status is
// code.
func (a *App) messages(msgs []loop.Message, code int) error {
	for _, m := range msgs {
		w := a.Stdout
		if m.Stream == "err" {
			w = a.Stderr
		}
		fmt.Fprintln(w, termLines(m.Text))
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}
