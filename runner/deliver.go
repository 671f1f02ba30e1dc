package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	loop "github.com/the-loop-dev/the-loop"
)

// DeliverTo types text into target's pane as one message (decisions D13, original
// §2.4): the text is sanitised, loaded into a tmux buffer of its own from
// stdin (no temp file, no argv limit), pasted bracketed, and after the
// longer of SubmitDelay and submitDelay submitted by a separate unbracketed
// paste of a carriage return. submitDelay is the delay one delivery's agent
// needs (an adapter's SubmitDelay, e.g. harness.GeminiSubmitDelay), not
// every pane's; 0 leaves the runner's own. Both go to the agent's pane
// (agentPane), not to whatever window an attached operator has made
// current. send-keys is never used (original §2.4). One delivery per
// target runs at a time, across processes. A delivery that fails or whose
// ctx is cancelled midway drops its tmux buffers. DeliverTo checks no
// liveness nor readiness: call WaitReady first.
func (t *Tmux) DeliverTo(ctx context.Context, target, text string, submitDelay time.Duration) error {
	if err := guard(target); err != nil {
		return err
	}
	clean := Sanitize(text)
	if clean == "" {
		return fail(loop.EINVALID, nil, "nothing to deliver to tmux session %s: the text is empty", target)
	}
	unlock, err := t.lockTarget(ctx, target)
	if err != nil {
		return err
	}
	defer unlock()

	pane := agentPane(target)
	buf := t.bufferName()
	submit := buf + "-submit"
	// left names the buffers this delivery may have left in tmux: one whose
	// load or paste failed or was cut off. They are dropped on the way out,
	// even when ctx is done (cleanupCtx).
	var left []string
	defer func() {
		if len(left) == 0 {
			return
		}
		cctx, cancel := cleanupCtx(ctx)
		defer cancel()
		for _, b := range left {
			t.dropBuffer(cctx, b)
		}
	}()
	left = []string{buf}
	// One tmux command list — leave copy mode, load the text from stdin,
	// paste it bracketed — which the server runs in order and stops at the
	// first failure: one round trip instead of three, so fifty concurrent
	// says queue less on the one tmux server.
	err = t.doIn(ctx, strings.NewReader(clean),
		"copy-mode", "-q", "-t", pane, ";", "load-buffer", "-b", buf, "-", ";", "paste-buffer", "-p", "-d", "-b", buf, "-t", pane)
	if err != nil {
		if sessionGone(err) || !answered(err) {
			return tmuxFailed(target, "paste into", err)
		}
		// tmux refused one of the list (an older tmux without copy-mode -q,
		// say); nothing was pasted, as the paste is the list's last command.
		// The steps one by one say which.
		if err := t.pasteStepwise(ctx, target, pane, buf, clean); err != nil {
			return err
		}
	}
	left = nil // paste-buffer -d deleted it
	if err := t.opt.Sleep(ctx, max(t.opt.SubmitDelay, submitDelay)); err != nil {
		return fail(loop.EINTERNAL, err, "the text was pasted into tmux session %s but not submitted: %v", target, err)
	}
	left = nil
	return t.submit(ctx, target, submit)
}

// pasteStepwise is the paste of DeliverTo one tmux call at a time:
// leaving copy mode (a tmux that cannot is warned about, the paste still
// reaches the pane's process), loading buf with clean, pasting it.
func (t *Tmux) pasteStepwise(ctx context.Context, target, pane, buf, clean string) error {
	if err := t.do(ctx, "copy-mode", "-q", "-t", pane); err != nil {
		if sessionGone(err) || !answered(err) {
			return tmuxFailed(target, "leave copy mode in", err)
		}
		t.log.Warn("could not leave copy mode", "target", target, "error", err)
	}
	if err := t.load(ctx, buf, clean); err != nil {
		return tmuxFailed(target, "load the text for", err)
	}
	if err := t.do(ctx, "paste-buffer", "-p", "-d", "-b", buf, "-t", pane); err != nil {
		return tmuxFailed(target, "paste into", err)
	}
	return nil
}

// SubmitTo presses the submit key once more in target's agent pane (a
// separate unbracketed paste of a carriage return), one delivery per
// target at a time: for a say whose first submit left no evidence.
func (t *Tmux) SubmitTo(ctx context.Context, target string) error {
	if err := guard(target); err != nil {
		return err
	}
	unlock, err := t.lockTarget(ctx, target)
	if err != nil {
		return err
	}
	defer unlock()
	return t.submit(ctx, target, t.bufferName()+"-submit")
}

// submit pastes a carriage return from buffer name into target's agent
// pane: the buffer set and pasted in one tmux command list.
func (t *Tmux) submit(ctx context.Context, target, name string) error {
	pane := agentPane(target)
	if err := t.do(ctx, "set-buffer", "-b", name, "\r", ";", "paste-buffer", "-d", "-b", name, "-t", pane); err != nil {
		cctx, cancel := cleanupCtx(ctx)
		defer cancel()
		t.dropBuffer(cctx, name)
		return tmuxFailed(target, "submit in", err)
	}
	return nil
}

// load fills tmux buffer name with data read from tmux's stdin.
func (t *Tmux) load(ctx context.Context, name, data string) error {
	return t.doIn(ctx, strings.NewReader(data), "load-buffer", "-b", name, "-")
}

// dropBuffer deletes a buffer a failed or interrupted delivery may have
// left behind (best-effort: it may not exist).
func (t *Tmux) dropBuffer(ctx context.Context, name string) {
	if err := t.do(ctx, "delete-buffer", "-b", name); err != nil {
		t.log.Debug("could not delete tmux buffer", "buffer", name, "error", err)
	}
}

// randomBufferName returns "the-loop-<pid>-<random hex>".
func randomBufferName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("the-loop-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// Sanitize normalises text for delivery (decisions D13): CRLF and CR become LF; ESC,
// every other C0 control but LF and TAB, DEL, the C1 controls
// (U+0080–U+009F) and bytes that are not UTF-8 are removed, so the text
// cannot end the bracketed paste nor type keystrokes.
func Sanitize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var b bytes.Buffer
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
