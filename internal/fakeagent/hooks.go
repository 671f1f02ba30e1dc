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
		"Notification": "notification_type",
		"PostToolUse":  "tool_name",
		"PreToolUse":   "tool_name",
		"SessionStart": "source",
		"SessionEnd":   "reason",
	}[fmt.Sprint(payload["hook_event_name"])]
	s, _ := payload[key].(string)
	return s
}

// fire runs every command hook declared for the payload's event, one
// after the other, each with the payload on stdin (sh -c, the agent's cwd
// and environment), and logs each run; exit statuses are only logged.
// Nothing is logged for an event without hooks, so the log of an agent
// spawned without --settings holds only what it was sent.
func (a *agent) fire(event string, fields map[string]any) {
	event, fields, ok := a.shape(event, fields)
	if !ok {
		return // the contract's CLI has no such hook
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
	for _, g := range a.hooks[event] {
		if !g.matches(subject) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type != "command" || h.Command == "" {
				continue
			}
			timeout := hookTimeout
			if h.Timeout > 0 {
				timeout = time.Duration(h.Timeout) * time.Second
				if a.contract == contractGemini { // the Gemini CLI counts milliseconds
					timeout = time.Duration(h.Timeout) * time.Millisecond
				}
			}
			began := time.Now()
			code, out, err := runHook(h, a.cwd, body, timeout)
			took := time.Since(began)
			if err == nil && a.contract == contractGemini && !json.Valid(bytes.TrimSpace(out)) {
				err = fmt.Errorf("hook output is not JSON: %q", out) // the CLI reports such a hook failed
			}
			a.log.write(entry{Kind: "hook", Event: event, Command: h.Command, Code: code,
				Error: errText(err), Payload: body, Text: string(out), Micros: took.Microseconds()})
		}
	}
}

// runHook runs one command hook within timeout and returns its exit
// status and stdout.
func runHook(h hookCommand, cwd string, payload []byte, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", h.Command)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+cwd)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.WaitDelay = time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.Bytes(), fmt.Errorf("%w: %s", err, bytes.TrimSpace(append(out.Bytes(), errOut.Bytes()...)))
	case err != nil:
		return -1, out.Bytes(), err
	}
	return 0, out.Bytes(), nil
}
