package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// StandingCmd groups the standing-session verbs.
type StandingCmd struct {
	List    StandingListCmd    `cmd:"" help:"List declared and recorded standing sessions."`
	Start   StandingStartCmd   `cmd:"" help:"Start one standing session, or every declared and created one."`
	Stop    StandingStopCmd    `cmd:"" help:"Stop one standing session, or every recorded one (the record is kept)."`
	Restart StandingRestartCmd `cmd:"" help:"Stop then start one standing session (its conversation resumes)."`
	Say     StandingSayCmd     `cmd:"" help:"Paste a message into a running standing session."`
	Create  StandingCreateCmd  `cmd:"" help:"Create a standing session at runtime."`
	Delete  StandingDeleteCmd  `cmd:"" help:"Stop a created standing session and forget it."`

	Transcript StandingTranscriptCmd `cmd:"" help:"Show what a standing session's agent was told and answered (its conversation's last entries)."`
	Peek       StandingPeekCmd       `cmd:"" help:"Show the last lines of a standing session's agent pane (dialogs included)."`
	Attach     StandingAttachCmd     `cmd:"" help:"Attach this terminal to a standing session's agent in tmux (read-only unless --write)."`

	Approvals StandingApprovalsCmd `cmd:"" help:"List the permission requests the agents wait on (pending first)."`
	Approve   StandingApproveCmd   `cmd:"" help:"Allow a standing session's pending permission request."`
	Deny      StandingDenyCmd      `cmd:"" help:"Deny a standing session's pending permission request, with a message the agent reads."`
}

// StandingListCmd is `the-loop standing list`.
type StandingListCmd struct {
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
	JSON   bool   `name:"json" help:"Same as --format json."`
}

// Run lists the sessions.
func (c *StandingListCmd) Run(ctx context.Context, a *App, api services) error {
	rows, err := api.Standing.List(ctx)
	if err != nil {
		return err
	}
	if c.JSON || c.Format == "json" {
		return writeJSON(a.Stdout, rows)
	}
	renderList(a.Stdout, a.Stderr, rows)
	return nil
}

// StandingStartCmd is `the-loop standing start [NAME]`.
type StandingStartCmd struct {
	Name   string `arg:"" optional:"" help:"The session (default: every declared and created one)."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run starts.
func (c *StandingStartCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Control(ctx, loop.StandingControlRequest{Name: c.Name, Verb: loop.VerbStart})
	return a.controlAs(c.Format, res, err)
}

// StandingStopCmd is `the-loop standing stop [NAME]`.
type StandingStopCmd struct {
	Name   string `arg:"" optional:"" help:"The session (default: every recorded one)."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// picking: a stop works from the records even when the config is broken
// (decisions D8), within the stop's bound.
func (c *StandingStopCmd) picking() picking { return picking{load: loadStop} }

// Run stops.
func (c *StandingStopCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Control(ctx, loop.StandingControlRequest{Name: c.Name, Verb: loop.VerbStop})
	return a.controlAs(c.Format, res, err)
}

// StandingRestartCmd is `the-loop standing restart NAME`.
type StandingRestartCmd struct {
	Name   string `arg:"" help:"The session."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run restarts.
func (c *StandingRestartCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Control(ctx, loop.StandingControlRequest{Name: c.Name, Verb: loop.VerbRestart})
	return a.controlAs(c.Format, res, err)
}

// StandingSayCmd is `the-loop standing say NAME (--text T | --text-file F | --text -) [--wait [--timeout D]]`.
type StandingSayCmd struct {
	Name      string `arg:"" help:"The session."`
	talkFlags `kong:"embed,set='talk=message',set='talker=speaking'"`
}

// maxSay bounds a message read from a file or stdin.
const maxSay = 16 << 20

// prepare refuses a --timeout that is no positive duration and reads the
// message (from standard input with --text -).
func (c *StandingSayCmd) prepare(a *App) error { return c.read(a, "say") }

// Run says.
func (c *StandingSayCmd) Run(ctx context.Context, a *App, api services) error {
	req := loop.StandingSayRequest{Name: c.Name, Text: c.text, Actor: c.Actor, Wait: c.Wait, TimeoutSeconds: c.seconds}
	stopped := fmt.Sprintf("stopped waiting for the answer of standing session '%s': a message already pasted stays delivered; its answer will be in `the-loop standing transcript %[1]s`", termSafe(c.Name))
	return talkVerb(ctx, a, &c.talkFlags, api.Standing.Say, req, func(res *loop.SayResult) loop.SayResult {
		res.Messages = noneNil(res.Messages)
		return *res
	}, stopped)
}

// talkVerb is a say's or a reply's one path in the CLI: req made (call), a
// wait its context ended printing stopped (exit 1: what was pasted stays
// delivered), else the result written (writeSayResult) as shown makes it a
// say's (and its messages [] for none).
func talkVerb[Req, Res any](ctx context.Context, a *App, f *talkFlags, call func(context.Context, Req) (Res, error), req Req, shown func(*Res) loop.SayResult, stopped string) error {
	res, err := call(ctx, req)
	if err != nil {
		if f.Wait && ctx.Err() != nil {
			fmt.Fprintln(a.Stderr, stopped)
			return &exitError{code: 1}
		}
		return err
	}
	said := shown(&res) // before res is written: shown fills its messages
	return a.writeSayResult(f.Format, res, said)
}

// writeSayResult prints a say's or a reply's result: v as JSON with
// --format json, else res's messages and answer (sayWithReply); the exit
// status is res's.
func (a *App) writeSayResult(format string, v any, res loop.SayResult) error {
	if format == "json" {
		if err := writeJSON(a.Stdout, v); err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return &exitError{code: res.ExitCode}
		}
		return nil
	}
	return a.sayWithReply(res)
}

// sayWithReply prints a say result's messages, then its answer; the exit
// status is its exitCode.
func (a *App) sayWithReply(res loop.SayResult) error {
	for _, m := range res.Messages {
		w := a.Stdout
		if m.Stream == "err" {
			w = a.Stderr
		}
		fmt.Fprintln(w, termLines(m.Text))
	}
	if res.Reply != "" {
		fmt.Fprintln(a.Stdout, termLines(res.Reply))
	}
	if res.ExitCode != 0 {
		return &exitError{code: res.ExitCode}
	}
	return nil
}

// talkFlags are the flags a say and a reply share, embedded in each; the
// verb's tag sets ${talk} (what is pasted: message, reply) and ${talker}
// (what its actor is doing: speaking, replying) for their help.
type talkFlags struct {
	Text     string        `help:"The ${talk}; - reads it from standard input." placeholder:"TEXT"`
	TextFile string        `name:"text-file" help:"Read the ${talk} from a file." placeholder:"FILE" type:"path"`
	Actor    string        `help:"Who is ${talker} (recorded for audit, never trusted)."`
	Wait     bool          `help:"Wait for the turn's answer and print it (the delivery line goes to stderr)."`
	Timeout  time.Duration `help:"How long --wait waits for the answer." default:"5m"`
	Format   string        `enum:"text,json" default:"text" help:"Output format (text or json)."`

	text    string  // the text read (read)
	seconds float64 // how long a waiting request waits (read)
}

// picking: the service's answer comes within the wait, the ready and the
// submit waits (waitBound).
func (f *talkFlags) picking() picking {
	if !f.Wait {
		return picking{}
	}
	return picking{wait: f.Timeout}
}

// read refuses a --timeout that is no positive duration and reads the
// verb's text (messageText) into text, and how many seconds a waiting
// request waits into seconds (0 without --wait).
func (f *talkFlags) read(a *App, verb string) error {
	if f.Wait && f.Timeout <= 0 {
		return loop.Invalid("--timeout %s is not a positive duration; give one such as 30s or 5m", f.Timeout)
	}
	text, err := messageText(verb, f.Text, f.TextFile, a.Stdin)
	f.text = text
	if err == nil && f.Wait {
		f.seconds = f.Timeout.Seconds()
	}
	return err
}

// noneNil is msgs, [] for none: JSON shows [], never null.
func noneNil(msgs []loop.Message) []loop.Message {
	if msgs == nil {
		return []loop.Message{}
	}
	return msgs
}

// messageText reads a say's or a reply's message: --text, --text-file, or
// --text - for standard input (decisions D14b: long texts never travel as
// one argument).
func messageText(verb, text, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && text != "":
		return "", loop.Invalid("pass --text or --text-file, not both")
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", loop.Invalid("cannot read '%s': %v", file, err)
		}
		defer f.Close()
		return readText(f, maxSay)
	case text == "-":
		return readText(stdin, maxSay)
	case text == "":
		return "", loop.Invalid("%s needs a message: --text TEXT, --text-file FILE, or --text - to read standard input", verb)
	}
	return text, nil
}

// readText reads a message from r (a --text-file or standard input),
// refusing one larger than limit bytes (EINVALID).
func readText(r io.Reader, limit int64) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(data)) > limit {
		return "", loop.Invalid("the message is larger than %d bytes", limit)
	}
	return string(data), nil
}

// StandingCreateCmd is `the-loop standing create NAME …`.
type StandingCreateCmd struct {
	Name        string `arg:"" help:"The new session's name (lowercase letters, digits, hyphens; max 40)."`
	spawnFlags  `kong:"embed,set='recorded=',set='brief=brief',set='briefHelp=The brief appended after the standing directive.'"`
	Description string   `help:"A description shown by list."`
	HarnessArg  []string `name:"harness-arg" help:"A harness argument (repeatable; omitted: inherit routing.harnessArgs)."`
	Slack       bool     `help:"Announce it in Slack and bind the thread."`
	SlackChan   string   `name:"slack-channel" help:"Slack channel id (default channels.slack.channel)."`
	NoAutoStart bool     `name:"no-auto-start" help:"Do not start it with the-loop start."`
	NoStart     bool     `name:"no-start" help:"Record it without starting it."`
	Restart     string   `help:"Restart policy when its agent dies: on-failure, always or never (default standingSessions.restart.policy)."`
	Format      string   `enum:"text,json" default:"text" help:"Output format (text or json)."`

	req loop.StandingCreateRequest // what prepare made of the flags
}

// prepare makes the request from the flags (the brief read from its file,
// the directory made absolute), refusing a mistake in them.
func (c *StandingCreateCmd) prepare(*App) error {
	prompt, cwd, err := c.spawnFlags.read()
	c.req = loop.StandingCreateRequest{
		Name: c.Name, Harness: c.Harness, Prompt: prompt, Cwd: cwd, Description: c.Description,
		SlackEnabled: c.Slack, SlackChannel: c.SlackChan, AutoStart: !c.NoAutoStart, Start: !c.NoStart,
		Restart: c.Restart,
	}
	return err
}

// spawnFlags are the flags a create and a start share, embedded in each;
// the verb's tag sets ${recorded} (what a start falls back to first),
// ${brief} (what the prompt is called) and ${briefHelp} for their help.
type spawnFlags struct {
	Harness    string `help:"Harness (default${recorded} routing.defaultHarness)."`
	Cwd        string `help:"Directory it runs in (default${recorded} routing.spawnWorkdir)."`
	Prompt     string `help:"${briefHelp}"`
	PromptFile string `name:"prompt-file" help:"Read the ${brief} from a file."`
}

// read is the prompt and directory from the flags: --prompt, or the file
// --prompt-file names read (never both), and --cwd made absolute, since a
// flag's path is the caller's and travels absolute; "" where a flag is not
// given.
func (f spawnFlags) read() (string, string, error) {
	prompt, promptFile, cwd := f.Prompt, f.PromptFile, f.Cwd
	if prompt != "" && promptFile != "" {
		return "", "", loop.Invalid("pass --prompt or --prompt-file, not both — there is no precedence between them")
	}
	if promptFile != "" {
		data, err := os.ReadFile(config.ExpandHome(promptFile))
		if err != nil {
			return "", "", loop.Invalid("cannot read '%s': %v", promptFile, err)
		}
		prompt = string(data)
	}
	if cwd == "" {
		return prompt, "", nil
	}
	abs, err := filepath.Abs(config.ExpandHome(cwd))
	if err != nil {
		return "", "", loop.Invalid("--cwd '%s': %v", cwd, err)
	}
	return prompt, abs, nil
}

// Run creates: a --harness-arg given (even none) replaces
// routing.harnessArgs, an omitted one inherits them.
func (c *StandingCreateCmd) Run(ctx context.Context, a *App, api services, kctx *kong.Context) error {
	req := c.req
	if flagSet(kctx, "harness-arg") {
		args := append([]string{}, c.HarnessArg...)
		req.HarnessArgs = &args
	}
	res, err := api.Standing.Create(ctx, req)
	return a.controlAs(c.Format, res, err)
}

// StandingDeleteCmd is `the-loop standing delete NAME`.
type StandingDeleteCmd struct {
	Name   string `arg:"" help:"The created session to forget."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run deletes. Unlike stop, it needs a config that validates (decisions
// D8: only stop works from the records alone).
func (c *StandingDeleteCmd) Run(ctx context.Context, a *App, api services) error {
	res, err := api.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: c.Name})
	return a.controlAs(c.Format, res, err)
}

// controlAs renders a control result in format: text (original §8.1:
// failed rows on stderr, the others on stdout), or json (the result as REST
// gives it, on stdout); exit 0 iff ok.
func (a *App) controlAs(format string, res loop.StandingControlResult, err error) error {
	if err != nil {
		return err
	}
	if format == "json" {
		if res.Sessions == nil {
			res.Sessions = []loop.StandingRow{}
		}
		if err := writeJSON(a.Stdout, res); err != nil {
			return err
		}
		return okExit(res.OK)
	}
	if len(res.Sessions) == 0 {
		fmt.Fprintln(a.Stderr, "(no standing sessions declared)")
		return nil
	}
	renderControl(a.Stdout, a.Stderr, res.Sessions)
	if !res.OK {
		return &exitError{code: 1}
	}
	return nil
}

// renderControl writes one line per row: name left-justified to the widest,
// two spaces, the outcome padded to 15, then two spaces and the detail
// (without a repeat of the outcome, ownDetail).
func renderControl(stdout, stderr io.Writer, rows []loop.StandingRow) {
	width := 0
	for _, r := range rows {
		width = max(width, len([]rune(termSafe(r.Name))))
	}
	for _, r := range rows {
		name := termSafe(r.Name)
		line := fmt.Sprintf("%s%s  %-15s", name, strings.Repeat(" ", width-len([]rune(name))), termSafe(r.Outcome))
		if detail := ownDetail(r.Outcome, r.Detail); detail != "" {
			line += "  " + termSafe(detail)
		}
		w := stdout
		if r.Outcome == loop.OutcomeFailed {
			w = stderr
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// ownDetail is a row's detail without the outcome it begins with
// ("started loop-standing-x (…)" under the outcome started reads
// "loop-standing-x (…)"): the row's outcome column already says it.
func ownDetail(outcome, detail string) string {
	if rest, ok := strings.CutPrefix(detail, outcome+" "); ok && outcome != "" {
		return rest
	}
	return detail
}

// renderList writes the list table (Name, Harness, Tmux, Declared, Status,
// Live, Activity, Up, Restarts, Last exit, Slack, Description), each cell
// but the last left-justified to its column's width; the status is
// statusWord's, as in status. A line under it says why each session that
// is down is down. When a session runs, stderr then offers the command
// that attaches to it.
func renderList(stdout, stderr io.Writer, rows []loop.StandingRow) {
	if len(rows) == 0 {
		fmt.Fprintln(stderr, "(no standing sessions declared)")
		return
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	or := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	table := [][]string{{"Name", "Harness", "Tmux", "Declared", "Status", "Live", "Activity", "Up", "Restarts", "Last exit", "Slack", "Description"}}
	attach := ""
	now := time.Now()
	var down []string
	for _, r := range rows {
		last := "-"
		if r.LastExit != nil {
			last = lastExit(r.LastExit, now)
		}
		table = append(table, []string{r.Name, or(r.Harness, "-"), r.TmuxTarget, yes(r.Declared), statusWord(r), yes(r.Running),
			or(string(r.Activity), "unknown"), or(uptime(r, now), "-"), strconv.Itoa(r.Restarts), last, or(r.SlackThread, "-"), or(oneLine(r.Description), "-")})
		if r.Running && attach == "" {
			attach = r.Name
		}
		if !r.Running && r.DownReason != "" {
			down = append(down, termSafe(r.Name)+" is down: "+termSafe(r.DownReason))
		}
	}
	writeTable(stdout, table)
	for _, d := range down {
		fmt.Fprintln(stdout, d)
	}
	if attach != "" {
		fmt.Fprintf(stderr, "attach: the-loop standing attach %s  (read-only; add --write to type into it)\n", termSafe(attach))
	}
}

// oneLine is s with its line breaks and runs of spaces folded into single
// spaces (a table cell holds one line).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeTable writes cells left-justified to each column's width, joined by
// two spaces, in one write (not a system call per row). The last column is
// not padded: a long detail in one row must not pad every other line.
func writeTable(w io.Writer, table [][]string) {
	var l tableLayout
	l.write(w, table)
}

// tableLayout keeps a table's column widths across writes, so rows written
// later (events --follow) line up with the header written first.
type tableLayout struct{ widths []int }

// write writes table in the layout, widening a column a cell is too wide
// for (the rows before stay as they were).
func (l *tableLayout) write(w io.Writer, table [][]string) {
	table = escapeTable(table)
	for _, row := range table {
		for len(l.widths) < len(row) {
			l.widths = append(l.widths, 0)
		}
		for i, c := range row {
			l.widths[i] = max(l.widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, row := range table {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = c
			if i < len(row)-1 {
				cells[i] += strings.Repeat(" ", l.widths[i]-len([]rune(c)))
			}
		}
		b.WriteString(strings.Join(cells, "  ") + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// escapeTable returns table with every cell passed through termSafe.
func escapeTable(table [][]string) [][]string {
	out := make([][]string, len(table))
	for i, row := range table {
		out[i] = make([]string, len(row))
		for j, c := range row {
			out[i][j] = termSafe(c)
		}
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// flagSet reports whether the command line set a flag (so an omitted
// repeatable flag can mean "inherit" while an explicit one means "these").
func flagSet(kctx *kong.Context, name string) bool {
	for _, f := range kctx.Flags() {
		if f.Name == name {
			return f.Set
		}
	}
	return false
}
