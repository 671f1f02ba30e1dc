package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/harness"
	"github.com/the-loop-dev/the-loop/hearing"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
)

// Bounds of one hook invocation: it always ends within hookDeadline.
const (
	hookDeadline    = 1800 * time.Millisecond
	hookPostTimeout = time.Second
	hookStoreWait   = 200 * time.Millisecond
)

// HookCmd is `the-loop hook`: Claude Code, Codex and the Gemini CLI run it
// for every hook the-loop declares. It reads the payload on stdin and hands it to the
// service of --state-root (POST /api/v1/hooks over its socket, with no
// credential: the service reads the hook's pid from the kernel), else to the store
// directly, else to the spool; it never loads the config and always exits
// 0 within 2 s — a hook's failure must never stop the agent.
type HookCmd struct {
	StateRoot string `name:"state-root" help:"The state root whose service or store hears the hook." placeholder:"DIR"`
	Session   string `help:"The session the hook is of: standing:<name> or a work item's ref." placeholder:"REF"`
	FromEnv   bool   `name:"from-env" help:"Take the state root and the session from THE_LOOP_HOOK_STATE_ROOT and THE_LOOP_HOOK_SESSION (a gemini spawn's environment); without them, do nothing."`
	JSON      bool   `name:"json" help:"Answer {} on stdout (an empty hook output, for a CLI that expects JSON from every hook: the Gemini CLI)."`
	// What the-loop-hook hands over with a payload it could not settle:
	// its delivery id, and whether it posted to the service already.
	Delivery string `name:"delivery" hidden:"" help:"The delivery id the-loop-hook gave the payload."`
	NoPost   bool   `name:"no-post" hidden:"" help:"The-loop-hook posted to the service already: the store or the spool."`
}

// Validate wants --state-root and --session, unless --from-env takes them
// from the environment.
func (c *HookCmd) Validate() error {
	if !c.FromEnv && (c.StateRoot == "" || c.Session == "") {
		return loop.Invalid("the-loop hook needs --state-root DIR and --session REF (or --from-env); it is run by the agent CLIs' hooks the-loop declares")
	}
	return nil
}

// Run delivers the payload, giving up silently at the deadline. A state
// root, socket record or spool that another user owns or others may
// write is refused (fileperm.CheckPrivate): the payload is not handed to it,
// and a note on stderr names it — the exit is 0 all the same.
func (c *HookCmd) Run(a *App) error {
	if c.JSON && a.Stdout != nil {
		fmt.Fprintln(a.Stdout, "{}")
	}
	if c.FromEnv {
		c.StateRoot, c.Session = os.Getenv(loop.HookStateRootEnv), os.Getenv(loop.HookSessionEnv)
		if c.StateRoot == "" || c.Session == "" {
			return nil // the CLI runs outside a the-loop spawn: nothing to tell
		}
	}
	var mu sync.Mutex
	ended := false
	note := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !ended && a.Stderr != nil {
			fmt.Fprintf(a.Stderr, "the-loop hook: %s: %s\n", what, loop.ErrorMessage(err))
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }() // never a non-zero exit
		c.deliver(a.Stdin, note)
	}()
	select {
	case <-done:
	case <-time.After(hookDeadline):
	}
	mu.Lock()
	ended = true
	mu.Unlock()
	return nil
}

// socketRecordPath is where a service records the socket it listens on:
// <state.root>/local/service.socket.
func socketRecordPath(stateRoot string) string {
	return filepath.Join(stateRoot, filepath.FromSlash(sdk.SocketRecordFile))
}

func (c *HookCmd) deliver(stdin io.Reader, note func(what string, err error)) {
	data, err := io.ReadAll(io.LimitReader(stdin, hearing.MaxHookRead))
	if err != nil && len(data) == 0 {
		return
	}
	// One id per invocation, kept on whichever roads the payload takes (a
	// POST that timed out, then the spool): it is applied once.
	d := loop.HookDelivery{Session: c.Session, Parents: parentChain(), ID: c.Delivery}
	if d.ID == "" {
		d.ID = loop.NewHookDeliveryID()
	}
	data, d.Truncated = hearing.ShrinkHookPayload(data)
	d.Payload = data
	if _, ok := hearing.ParseHookPayload(data); !ok {
		return // garbage: nothing to hear
	}
	root, err := filepath.Abs(c.StateRoot)
	if err != nil {
		return
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return // a state root that is gone (a stale settings file): nothing to tell
	}
	if err := fileperm.CheckPrivate(root, "state root (state.root)"); err != nil {
		note("dropped the "+c.Session+" payload", err)
		return
	}
	// --no-post: the-loop-hook posted it, and the service did not take it.
	if !c.NoPost && c.postChecked(root, d, note) {
		return
	}
	if c.direct(root, d) {
		return
	}
	if err := hearing.SpoolHook(root, d); err != nil {
		note("dropped the "+c.Session+" payload", err)
	}
}

// postChecked posts d (post) unless the socket record is not private
// (noted): true when the service took it.
func (c *HookCmd) postChecked(root string, d loop.HookDelivery, note func(what string, err error)) bool {
	if err := fileperm.CheckPrivatePath(root, socketRecordPath(root), "service socket record"); err != nil {
		note("not posting to the service it names", err)
		return false
	}
	return c.post(root, d)
}

// post hands d to the service of the state root over its socket (a
// socket another uid owns is never dialled; no credential is sent: the
// service reads the hook's pid and ancestry from the kernel); true when
// the service took it (or refused it for good).
func (c *HookCmd) post(root string, d loop.HookDelivery) bool {
	path := sdk.LocalSocket(root)
	if _, err := os.Lstat(path); err != nil {
		return false // no service: the store or the spool
	}
	ctx, cancel := context.WithTimeout(context.Background(), hookPostTimeout)
	defer cancel()
	err := sdk.Socket(path).PostHook(ctx, d)
	// 5xx: the service could not apply it; no answer: nor did it hear it;
	// anything else is its answer.
	status := sdk.HTTPStatus(err)
	return err == nil || (status != 0 && status < 500)
}

// direct applies d to the store itself (no service answers); false when
// the store is locked or cannot be written.
func (c *HookCmd) direct(root string, d loop.HookDelivery) bool {
	path := filepath.Join(root, "the-loop.db")
	if _, err := os.Stat(path); err != nil {
		return false // never create a store: the spool waits for one
	}
	db, err := store.Open(path, store.Options{Transient: true, Timeout: hookStoreWait})
	if err != nil {
		return false
	}
	defer db.Close()
	svc := &hearing.Hearer{DB: db, Events: &lifecycle.Service{DB: db, Source: "hook"},
		// The stock adapters: the hook checks its payload's id, and a
		// Stop reads its transcript, as the service would.
		Harness: harness.NewRegistry(harness.ClaudeOptions{}).Lookup,
		// Only the pane pids are asked of it: whether a clear comes from
		// the session's own pane.
		Runner: func(socket string) loop.Runner { return runner.New(runner.Options{Socket: socket}) }}
	ctx, cancel := context.WithTimeout(context.Background(), hookDeadline)
	defer cancel()
	// EINVALID: refused for good (an id not of the harness's shape), its
	// event written; spooling it would only refuse it again.
	err = svc.ApplyHook(ctx, root, d)
	return err == nil || loop.ErrorCode(err) == loop.EINVALID
}

// parentChain is this process's ancestors, nearest first (linux: from
// /proc; elsewhere only the parent).
func parentChain() []int {
	pid := os.Getppid()
	if runtime.GOOS != "linux" {
		return []int{pid}
	}
	var chain []int
	for pid > 1 && len(chain) < 64 {
		chain = append(chain, pid)
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			break
		}
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			break
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 {
			break
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			break
		}
	}
	return chain
}
