package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/lifecycle"
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

// SessionsListCmd is `the-loop sessions list`.
type SessionsListCmd struct {
	Status string `enum:",active,paused,closed" default:"" help:"Only sessions with this status (active, paused, closed)."`
	Format string `enum:"table,json" default:"table" help:"Output format (table or json)."`
}

// Run lists the sessions.
func (c *SessionsListCmd) Run(a *App) error {
	return a.withSessions(func(ctx context.Context, api sessionsAPI) error {
		rows, err := api.ListWorkItems(ctx, c.Status)
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
	})
}

// renderSessions writes the original's table (Work item, Harness, Session
// id, Tmux, Status, Control, Last event); with no rows, the header and
// "(no registered sessions)" on stderr.
func renderSessions(stdout, stderr io.Writer, rows []loop.WorkItemRow) {
	or := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	table := [][]string{{"Work item", "Harness", "Session id", "Tmux", "Status", "Control", "Last event"}}
	for _, r := range rows {
		last := "-"
		if r.LastEventAt != nil && *r.LastEventAt != "" {
			last = *r.LastEventAt
		}
		table = append(table, []string{r.Ref, r.Harness, r.HarnessSessionID, or(r.TmuxTarget), r.Status, "-", last})
	}
	writeTable(stdout, table)
	if len(rows) == 0 {
		fmt.Fprintln(stderr, "(no registered sessions)")
	}
}

// SessionsStartCmd is `the-loop sessions start --work-item REF`.
type SessionsStartCmd struct {
	WorkItem   string `name:"work-item" required:"" help:"The work item, e.g. github:octo/repo#15." placeholder:"REF"`
	Harness    string `help:"Harness (default: the recorded one, else routing.defaultHarness)."`
	Cwd        string `help:"Directory it runs in (default: the recorded one, else routing.spawnWorkdir)."`
	Prompt     string `help:"The boot prompt (default: one naming the work item)."`
	PromptFile string `name:"prompt-file" help:"Read the boot prompt from a file."`
	Slack      bool   `help:"Announce it in Slack (channels.slack.channel) and bind the thread: replies there are recorded on the ticket and reach the session."`
}

// Run starts.
func (c *SessionsStartCmd) Run(a *App) error {
	if c.Prompt != "" && c.PromptFile != "" {
		return loop.Invalid("pass --prompt or --prompt-file, not both — there is no precedence between them")
	}
	req := loop.WorkItemStartRequest{Ref: c.WorkItem, Harness: c.Harness, Prompt: c.Prompt, Slack: c.Slack}
	if c.PromptFile != "" {
		data, err := os.ReadFile(config.ExpandHome(c.PromptFile))
		if err != nil {
			return loop.Invalid("cannot read '%s': %v", c.PromptFile, err)
		}
		req.Prompt = string(data)
	}
	if c.Cwd != "" { // a flag's path is the caller's: it travels absolute
		abs, err := filepath.Abs(config.ExpandHome(c.Cwd))
		if err != nil {
			return loop.Invalid("--cwd '%s': %v", c.Cwd, err)
		}
		req.Cwd = abs
	}
	return a.withSessions(func(ctx context.Context, api sessionsAPI) error {
		res, err := api.StartWorkItem(ctx, req)
		if err != nil {
			return err
		}
		return a.messages(res.Messages, res.ExitCode)
	})
}

// SessionsReplyCmd is `the-loop sessions reply --work-item REF (--text T |
// --text-file F | --text -)`.
type SessionsReplyCmd struct {
	WorkItem string `name:"work-item" required:"" help:"The work item whose session gets the reply." placeholder:"REF"`
	Text     string `help:"The reply; - reads it from standard input." placeholder:"TEXT"`
	TextFile string `name:"text-file" help:"Read the reply from a file." placeholder:"FILE" type:"path"`
	Actor    string `help:"Who is replying (recorded for audit, never trusted)."`
}

// Run replies.
func (c *SessionsReplyCmd) Run(a *App) error {
	text, err := c.text(a.Stdin)
	if err != nil {
		return err
	}
	return a.withSessions(func(ctx context.Context, api sessionsAPI) error {
		res, err := api.ReplyWorkItem(ctx, c.WorkItem, text, c.Actor)
		if err != nil {
			return err
		}
		return a.messages(res.Messages, res.ExitCode)
	})
}

func (c *SessionsReplyCmd) text(stdin io.Reader) (string, error) {
	return messageText("reply", c.Text, c.TextFile, stdin)
}

// SessionsCloseCmd is `the-loop sessions close --work-item REF`.
type SessionsCloseCmd struct {
	WorkItem string `name:"work-item" required:"" help:"The work item whose session to close." placeholder:"REF"`
	KeepTmux bool   `name:"keep-tmux" xor:"tmux" help:"Keep the tmux session so its transcript stays readable (default: routing.tmux.keepSessionOnClose)."`
	KillTmux bool   `name:"kill-tmux" xor:"tmux" help:"Kill the tmux session along with the harness."`
}

// Run closes.
func (c *SessionsCloseCmd) Run(a *App) error {
	var keep *bool
	switch {
	case c.KeepTmux:
		keep = new(bool)
		*keep = true
	case c.KillTmux:
		keep = new(bool)
	}
	return a.withSessions(func(ctx context.Context, api sessionsAPI) error {
		res, err := api.CloseWorkItem(ctx, c.WorkItem, keep)
		if err != nil {
			return err
		}
		return a.messages(res.Messages, res.ExitCode)
	})
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

// sessionsAPI is what the work-item verbs need. The service answers it over
// REST when it runs; otherwise the verbs run in this process (decisions D3).
type sessionsAPI interface {
	ListWorkItems(ctx context.Context, status string) ([]loop.WorkItemRow, error)
	StartWorkItem(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error)
	ReplyWorkItem(ctx context.Context, ref, text, actor string) (loop.ReplyResult, error)
	CloseWorkItem(ctx context.Context, ref string, keepTmux *bool) (loop.CloseResult, error)
}

// localSessions runs the verbs in this process.
type localSessions struct {
	cfg *config.Config
	svc *lifecycle.Service
}

func (l localSessions) ListWorkItems(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	return l.svc.ListWorkItems(ctx, l.cfg, status)
}
func (l localSessions) StartWorkItem(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	return l.svc.StartWorkItem(ctx, l.cfg, req)
}
func (l localSessions) ReplyWorkItem(ctx context.Context, ref, text, actor string) (loop.ReplyResult, error) {
	return l.svc.ReplyWorkItem(ctx, l.cfg, ref, text, actor)
}
func (l localSessions) CloseWorkItem(ctx context.Context, ref string, keepTmux *bool) (loop.CloseResult, error) {
	return l.svc.CloseWorkItem(ctx, l.cfg, ref, keepTmux)
}

// remoteSessions asks the service.
type remoteSessions struct{ c *loophttp.Client }

func (r remoteSessions) ListWorkItems(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	return r.c.ListWorkItems(ctx, status)
}
func (r remoteSessions) StartWorkItem(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	return r.c.StartWorkItem(ctx, req)
}
func (r remoteSessions) ReplyWorkItem(ctx context.Context, ref, text, actor string) (loop.ReplyResult, error) {
	return r.c.ReplyWorkItem(ctx, ref, text, actor)
}
func (r remoteSessions) CloseWorkItem(ctx context.Context, ref string, keepTmux *bool) (loop.CloseResult, error) {
	return r.c.CloseWorkItem(ctx, ref, keepTmux)
}

// withSessions runs fn against the service when it answers, else in this
// process (never starting the service, decisions D3).
func (a *App) withSessions(fn func(ctx context.Context, api sessionsAPI) error) error {
	return a.withBackend(false,
		func(ctx context.Context, c *loophttp.Client) error { return fn(ctx, remoteSessions{c}) },
		func(ctx context.Context, cfg *config.Config, svc *lifecycle.Service) error {
			return fn(ctx, localSessions{cfg, svc})
		})
}
