// Command the-loop-hook is the hook program the agent CLIs run for every
// hook the-loop declares (decisions D37): installed beside the-loop and
// found next to it, it links the standard library and the root's own
// leaves alone (the root package, its SDK's wire format, the ownership
// checks), so an agent's every event pays for none of the service's
// libraries.
//
//	the-loop-hook --state-root DIR --session REF
//	the-loop-hook --state-root DIR --session REF --await-decision SECONDS
//	the-loop-hook --rules FILE [--state-root DIR --session REF]
//
// It reads the payload on stdin and posts it to the service of DIR over
// its socket, as `the-loop hook` does. Whatever it cannot settle so — no
// service answers, the payload is too large or not one it can read, the
// state root or the socket record is not private — it hands over, payload
// and delivery id, to `the-loop hook` beside it, which applies it to the
// store or the spool (and refuses what must be refused, naming it). It
// always exits 0 within 2 s: a hook's failure must never stop the agent.
//
// With --await-decision it is a standing session's PermissionRequest hook
// (decisions D35): it asks the service over its socket and holds the
// request open — no polling — until the approval is settled or SECONDS
// (and a little more) pass, then prints the decision Claude Code reads
// (an allow, or a deny with the decider's message), or nothing: the
// dialog is then the terminal's. The CLI's SIGTERM, when a key answered
// the dialog first, ends the request, and the service records the answer
// as the terminal's. With no service it hands the payload over as any
// hook's (the session is counted waiting) and prints nothing, within 2 s.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/sdk"
)

// Bounds of one invocation: the post, and the whole of it (the hand-over
// included), under the 2 s the-loop promises its hooks take.
const (
	postTimeout = time.Second
	deadline    = 1800 * time.Millisecond
)

// maxPayload is the largest payload this program posts itself; a larger
// one is shrunk by `the-loop hook` (hearing.MaxHookPayload).
const maxPayload = 1 << 20

func main() {
	if file, root, session, ok := parseRules(os.Args[1:]); ok {
		rulesMain(file, root, session)
		return
	}
	if root, session, wait, ok := parseAwait(os.Args[1:]); ok {
		awaitMain(root, session, wait)
		return
	}
	root, session, ok := parse(os.Args[1:])
	if fromEnv(os.Args[1:]) {
		// The Gemini CLI's one entry for every session (decisions D37):
		// it wants JSON from every hook, and the spawn's environment names
		// the session; outside a the-loop spawn there is nothing to tell.
		fmt.Println("{}")
		root, session = os.Getenv(loop.HookStateRootEnv), os.Getenv(loop.HookSessionEnv)
		if root == "" || session == "" {
			return
		}
		ok = true
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: the-loop-hook --state-root DIR --session REF, or --from-env --json (the agent CLIs run it for the hooks the-loop declares)")
		os.Exit(0) // never a failing hook
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	data, _ := io.ReadAll(io.LimitReader(os.Stdin, maxPayload+1))
	d := loop.HookDelivery{Session: session, Payload: data, ID: loop.NewHookDeliveryID()}
	tried, ok := posted(ctx, root, d)
	if !ok {
		handOver(ctx, root, d, tried)
	}
}

// fromEnv reports the form `--from-env --json` (either order), which
// takes the state root and the session from the environment and answers
// {} on stdout.
func fromEnv(args []string) bool {
	return len(args) == 2 && (args[0] == "--from-env" && args[1] == "--json" || args[0] == "--json" && args[1] == "--from-env")
}

// parse reads `--state-root DIR --session REF` in either order.
func parse(args []string) (root, session string, ok bool) {
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--state-root":
			root = args[i+1]
		case "--session":
			session = args[i+1]
		default:
			return "", "", false
		}
	}
	return root, session, len(args) == 4 && root != "" && session != ""
}

// parseRules reads `--rules FILE`, alone or with `--state-root DIR
// --session REF` (in any order): the PreToolUse hook of a session with
// approval rules, which tells the service what a rule decided.
func parseRules(args []string) (file, root, session string, ok bool) {
	if len(args) != 2 && len(args) != 6 {
		return "", "", "", false
	}
	var rest []string
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "--rules" {
			file = args[i+1]
			continue
		}
		rest = append(rest, args[i], args[i+1])
	}
	if len(rest) == 0 {
		return file, "", "", file != ""
	}
	root, session, ok = parse(rest)
	return file, root, session, ok && file != ""
}

// rulesMain is the PreToolUse hook: the answer of the first rule that
// matches on stdout (nothing when none does: the CLI's own rules decide),
// then, for an allow or a deny and a session named, the decision told to
// the service (standing.approval_decided by rule:<n>) — handed over as any
// hook's when no service answers, so it is recorded with the service
// down too.
func rulesMain(file, root, session string) {
	payload, _ := io.ReadAll(io.LimitReader(os.Stdin, maxPayload+1))
	out, report := ruled(file, payload)
	if out == nil {
		return
	}
	os.Stdout.Write(append(out, '\n'))
	if report == nil || session == "" {
		return
	}
	_ = os.Stdout.Close() // the answer is whole
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	d := loop.HookDelivery{Session: session, Payload: report, ID: loop.NewHookDeliveryID()}
	if tried, ok := posted(ctx, root, d); !ok {
		handOver(ctx, root, d, tried)
	}
}

// ruled is the PreToolUse answer the rules in file give payload, and, for
// an allow or a deny, the payload to report it with (loop.RuleReport): nil
// when none matches, or the file or the payload cannot be read (the CLI's
// own rules then decide).
func ruled(file string, payload []byte) (answer, report []byte) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	var rules []loop.ApprovalRule
	if json.Unmarshal(data, &rules) != nil {
		return nil, nil
	}
	var p struct {
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
		Cwd   string          `json:"cwd"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Tool == "" {
		return nil, nil
	}
	i, ok := loop.MatchApprovalRule(rules, p.Tool, p.Input, p.Cwd)
	if !ok {
		return nil, nil
	}
	r := rules[i]
	reason := r.Message
	if reason == "" {
		reason = strings.TrimSpace(fmt.Sprintf("approval rule %d of the-loop: %s %s", i+1, r.Tool, r.Match))
	}
	if r.Decision != loop.RuleAsk {
		report = loop.RuleReport(payload, i+1, r.Decision)
	}
	return loop.PreToolUseAnswer(r.Decision, reason), report
}

// parseAwait reads `--state-root DIR --session REF --await-decision
// SECONDS`, in any order.
func parseAwait(args []string) (root, session string, wait time.Duration, ok bool) {
	if len(args) != 6 {
		return "", "", 0, false
	}
	var rest []string
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "--await-decision" {
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n <= 0 {
				return "", "", 0, false
			}
			wait = time.Duration(n) * time.Second
			continue
		}
		rest = append(rest, args[i], args[i+1])
	}
	root, session, ok = parse(rest)
	return root, session, wait, ok && wait > 0
}

// awaitSlack is how much longer than the service's wait the hook waits
// for its answer: the service answers at its wait's end, and the CLI
// gives the hook loop.ApprovalHookSlack more still.
const awaitSlack = 5 * time.Second

// awaitMain is the PermissionRequest hook: the decision on stdout, or
// nothing.
func awaitMain(root, session string, wait time.Duration) {
	data, _ := io.ReadAll(io.LimitReader(os.Stdin, maxPayload+1))
	d := loop.HookDelivery{Session: session, Payload: data, ID: loop.NewHookDeliveryID()}
	ctx, cancel := context.WithTimeout(context.Background(), wait+awaitSlack)
	defer cancel()
	ctx, stop := parentGone(ctx)
	defer stop()
	answer, asked := awaitDecision(ctx, root, d, socketClient)
	if ctx.Err() != nil && asked {
		return // a key answered the dialog: nothing to print
	}
	if !asked {
		hctx, hcancel := context.WithTimeout(context.Background(), deadline)
		defer hcancel()
		handOver(hctx, root, d, false)
		return
	}
	if out := loop.PermissionRequestAnswer(answer); out != nil {
		os.Stdout.Write(append(out, '\n'))
	}
}

// awaiter asks the service for a decision (sdk.Client; a fake in tests).
type awaiter interface {
	AwaitDecision(ctx context.Context, d loop.HookDelivery, heldWithin time.Duration) (loop.ApprovalAnswer, error)
}

// socketClient is the service's client over the socket at path.
func socketClient(path string) awaiter { return sdk.Socket(path) }

// heldWithin is how soon the service must say it holds the request: a
// service that does not is taken as none, within G's 2 s bound.
const heldWithin = 1500 * time.Millisecond

// awaitDecision asks the service of root to decide d: asked false when no
// service could be asked (no private socket, none answering, a payload it
// would not take), and then the caller hands d over as any hook's.
func awaitDecision(ctx context.Context, root string, d loop.HookDelivery, dial func(socket string) awaiter) (loop.ApprovalAnswer, bool) {
	path, ok := serviceSocket(root, d)
	if !ok {
		return loop.ApprovalAnswer{}, false
	}
	answer, err := dial(path).AwaitDecision(ctx, d, heldWithin)
	if err != nil {
		status := sdk.HTTPStatus(err)
		return loop.ApprovalAnswer{}, status != 0 && status < 500 // a refusal is final; no answer is no service
	}
	return answer, true
}

// serviceSocket is the socket of root's service, when d is a payload to
// post and the state root and the socket record are private.
func serviceSocket(root string, d loop.HookDelivery) (string, bool) {
	if len(d.Payload) > maxPayload || !hookPayload(d.Payload) {
		return "", false
	}
	abs, err := filepath.Abs(root)
	if err != nil || fileperm.CheckPrivate(abs, "state root (state.root)") != nil ||
		fileperm.CheckPrivatePath(abs, filepath.Join(abs, filepath.FromSlash(sdk.SocketRecordFile)), "service socket record") != nil {
		return "", false
	}
	path := sdk.LocalSocket(abs)
	if _, err := os.Lstat(path); err != nil {
		return "", false
	}
	return path, true
}

// posted hands d to the service of root over its socket: tried when it
// was posted, ok when the service took it or refused it for good (a 4xx).
// Anything short of that is left to the hand-over.
func posted(ctx context.Context, root string, d loop.HookDelivery) (tried, ok bool) {
	path, ok := serviceSocket(root, d)
	if !ok {
		return false, false
	}
	pctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	err := sdk.Socket(path).PostHook(pctx, d)
	status := sdk.HTTPStatus(err)
	return true, err == nil || (status != 0 && status < 500)
}

// hookPayload reports whether data is a whole hook payload: a JSON object
// naming its event.
func hookPayload(data []byte) bool {
	var p struct {
		Event string `json:"hook_event_name"`
	}
	return json.Unmarshal(data, &p) == nil && p.Event != ""
}

// handOver runs `the-loop hook` beside this program on d: the payload
// read so far and the rest of stdin, the delivery's id kept, and, when the
// service was posted to already, --no-post (the store or the spool, within
// what is left of the deadline).
func handOver(ctx context.Context, root string, d loop.HookDelivery, posted bool) {
	self, err := os.Executable()
	if err != nil {
		return
	}
	args := []string{"hook", "--state-root", root, "--session", d.Session, "--delivery", d.ID}
	if posted {
		args = append(args, "--no-post")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(self), "the-loop"), args...)
	cmd.Stdin = io.MultiReader(bytes.NewReader(d.Payload), os.Stdin)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 100 * time.Millisecond
	_ = cmd.Run()
}
