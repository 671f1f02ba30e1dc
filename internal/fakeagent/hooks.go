//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync/atomic"
	"syscall"
	"time"
)

// hookTimeout bounds one hook command unless its own `timeout` (seconds)
// says otherwise.
const hookTimeout = 10 * time.Second

// hookCommand is one entry of a matcher group's `hooks` list.
type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"` // seconds
}

// matcherGroup is one element of an event's list in `hooks`.
type matcherGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

// hookSet maps an event name (Stop, SessionStart, …) to its groups.
type hookSet map[string][]matcherGroup

// loadSettings reads each --settings value (a file, or inline JSON when it
// starts with '{') and merges their hooks, in order.
func loadSettings(values []string) (hookSet, error) {
	set := hookSet{}
	for _, v := range values {
		data := []byte(v)
		if len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '{' {
			b, err := os.ReadFile(v)
			if err != nil {
				return set, fmt.Errorf("--settings %s: %w", v, err)
			}
			data = b
		}
		var s struct {
			Hooks hookSet `json:"hooks"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return set, fmt.Errorf("--settings %s: not a settings document: %w", v, err)
		}
		for ev, groups := range s.Hooks {
			set[ev] = append(set[ev], groups...)
		}
	}
	return set, nil
}

// matches reports whether a group's matcher selects subject: an empty
// matcher or "*" selects everything, anything else is a regular expression
// that must match the whole subject (Claude Code's rule for tool names,
// notification types, sources and reasons).
func (g matcherGroup) matches(subject string) bool {
	if g.Matcher == "" || g.Matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + g.Matcher + ")$")
	if err != nil {
		return g.Matcher == subject
	}
	return re.MatchString(subject)
}

// matchSubject is what an event's matcher is compared with.
func matchSubject(payload map[string]any) string {
	key := map[string]string{
		"Notification":      "notification_type",
		"PostToolUse":       "tool_name",
		"PreToolUse":        "tool_name",
		"PermissionRequest": "tool_name",
		"SessionStart":      "source",
		"SessionEnd":        "reason",
	}[fmt.Sprint(payload["hook_event_name"])]
	s, _ := payload[key].(string)
	return s
}

// fire runs every command hook declared for the payload's event, one
// after the other, each with the payload on stdin (sh -c, the agent's cwd
// and environment), logs each run and returns what each did; exit statuses
// are only logged. Nothing is logged for an event without hooks, so the
// log of an agent spawned without --settings holds only what it was sent.
func (a *agent) fire(event string, fields map[string]any) []hookRun {
	event, body, cmds := a.hookCommands(event, fields)
	var runs []hookRun
	for _, h := range cmds {
		r := hookRun{h: h, event: event, payload: body}
		p, err := startHook(h, a.cwd, body, a.hookTimeout(event, h))
		if err != nil {
			r.code, r.err = -1, err
		} else {
			r = p.wait()
			r.event, r.payload = event, body
		}
		a.logHook(r)
		runs = append(runs, r)
	}
	return runs
}

// fireAsync starts every command hook declared for the payload's event at
// once, without waiting: each one's hookRun, marked with gen, reaches the
// main loop through a.hookDone when it ends (which logs it). A hook_started
// entry is logged for each.
func (a *agent) fireAsync(event string, fields map[string]any, gen int) []*hookProc {
	event, body, cmds := a.hookCommands(event, fields)
	var procs []*hookProc
	for _, h := range cmds {
		p, err := startHook(h, a.cwd, body, a.hookTimeout(event, h))
		if err != nil {
			a.logHook(hookRun{h: h, event: event, payload: body, code: -1, err: err})
			continue
		}
		a.log.write(entry{Kind: "hook_started", Event: event, Command: h.Command, Payload: body})
		procs = append(procs, p)
		go func() {
			r := p.wait()
			r.event, r.payload, r.gen, r.proc = event, body, gen, p
			a.hookDone <- r
		}()
	}
	return procs
}

// hookCommands is the contract's name for event, the payload (the common
// fields and fields) as JSON, and the command hooks whose matcher selects
// it; no commands when the contract's CLI has no such hook.
func (a *agent) hookCommands(event string, fields map[string]any) (string, []byte, []hookCommand) {
	event, fields, ok := a.shape(event, fields)
	if !ok {
		return event, nil, nil
	}
	payload := map[string]any{
		"session_id":      a.sessionID,
		"transcript_path": a.sessionFilePath(),
		"cwd":             a.cwd,
		"hook_event_name": event,
	}
	for k, v := range fields {
		payload[k] = v
	}
	body, _ := json.Marshal(payload)
	subject := matchSubject(payload)
	var cmds []hookCommand
	for _, g := range a.hooks[event] {
		if !g.matches(subject) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type == "command" && h.Command != "" {
				cmds = append(cmds, h)
			}
		}
	}
	return event, body, cmds
}

// hookTimeout is how long h may run: its `timeout` (seconds; the Gemini
// CLI counts milliseconds), else 600 s for a PermissionRequest (Claude
// Code's default, measured: the hook may hold its dialog that long), else
// the stand-in's own bound, hookTimeout.
func (a *agent) hookTimeout(event string, h hookCommand) time.Duration {
	switch {
	case h.Timeout > 0 && a.contract == contractGemini:
		return time.Duration(h.Timeout) * time.Millisecond
	case h.Timeout > 0:
		return time.Duration(h.Timeout) * time.Second
	case event == "PermissionRequest":
		return permissionHookTimeout
	}
	return hookTimeout
}

// permissionHookTimeout is Claude Code's default hook timeout, which a
// PermissionRequest hook without its own `timeout` gets.
const permissionHookTimeout = 600 * time.Second

// logHook writes r's hook entry. Under the Gemini contract a command whose
// stdout is not JSON is logged as failed, as the CLI reports it.
func (a *agent) logHook(r hookRun) {
	err := r.err
	if err == nil && a.contract == contractGemini && !json.Valid(bytes.TrimSpace(r.out)) {
		err = fmt.Errorf("hook output is not JSON: %q", r.out)
	}
	a.log.write(entry{Kind: "hook", Event: r.event, Command: r.h.Command, Code: r.code,
		Error: errText(err), Payload: r.payload, Text: string(r.out), Micros: r.took.Microseconds()})
}

// hookRun is what one command hook did.
type hookRun struct {
	h        hookCommand
	event    string
	payload  []byte
	code     int    // its exit status (-1 when it could not start or was killed)
	out      []byte // its stdout
	err      error
	timedOut bool // it was still running at its timeout (and got SIGTERM)
	took     time.Duration
	gen      int       // fireAsync: the dialog it was started for
	proc     *hookProc // fireAsync: the process it was
}

// hookProc is a command hook running as Claude Code runs one, `sh -c
// <command>`, here in a process group of its own so that SIGTERM — at its
// timeout, or when a key answers its dialog first — reaches what the shell
// started too (such as a the-loop-hook grandchild).
type hookProc struct {
	h           hookCommand
	cmd         *exec.Cmd
	ctx         context.Context
	cancel      context.CancelFunc
	out, errOut bytes.Buffer
	began       time.Time
	timeout     time.Duration
	exited      atomic.Bool // wait has seen it end
}

// startHook starts h in cwd with payload on stdin; it gets SIGTERM (its
// whole process group) at timeout, or at terminate, and SIGKILL a second
// after that if it is still there.
func startHook(h hookCommand, cwd string, payload []byte, timeout time.Duration) (*hookProc, error) {
	p := &hookProc{h: h, began: time.Now(), timeout: timeout}
	p.ctx, p.cancel = context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(p.ctx, "sh", "-c", h.Command)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+cwd)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout, cmd.Stderr = &p.out, &p.errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
			return os.ErrProcessDone
		}
		return nil
	}
	cmd.WaitDelay = time.Second
	p.cmd = cmd
	if err := cmd.Start(); err != nil {
		p.cancel()
		return nil, err
	}
	return p, nil
}

// terminate sends SIGTERM to the hook's process group now and reports
// whether it was still running (nothing is sent to one that has ended).
func (p *hookProc) terminate() bool {
	running := !p.exited.Load()
	p.cancel()
	return running
}

// wait waits for the hook to end and returns its exit status and stdout.
func (p *hookProc) wait() hookRun {
	err := p.cmd.Wait()
	p.exited.Store(true)
	timedOut := errors.Is(p.ctx.Err(), context.DeadlineExceeded)
	p.cancel()
	r := hookRun{h: p.h, out: p.out.Bytes(), timedOut: timedOut, took: time.Since(p.began), code: -1}
	if st := p.cmd.ProcessState; st != nil {
		r.code = st.ExitCode()
	}
	var ee *exec.ExitError
	switch {
	case timedOut:
		r.err = fmt.Errorf("timed out after %v: %w", p.timeout, err)
	case errors.As(err, &ee):
		r.err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(append(p.out.Bytes(), p.errOut.Bytes()...)))
	case err != nil:
		r.err = err
	}
	return r
}
