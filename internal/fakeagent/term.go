//go:build linux

package main

import (
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// terminal is the fake's stdin tty (or a plain file when it is not one).
type terminal struct {
	fd    int
	saved *unix.Termios // nil when fd is not a tty
}

// newTerminal remembers fd's terminal mode for restore.
func newTerminal(fd int) *terminal {
	t := &terminal{fd: fd}
	if tio, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		t.saved = tio
	}
	return t
}

// discardUntil reads and drops whatever is typed until deadline, leaving
// the terminal in its (canonical) mode, as Claude Code does while it starts.
func (t *terminal) discardUntil(deadline time.Time) {
	buf := make([]byte, 4096)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(left, 20*time.Millisecond)/time.Millisecond)+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			time.Sleep(min(left, 20*time.Millisecond))
			continue
		}
		if n > 0 && fds[0].Revents&unix.POLLIN != 0 {
			_, _ = unix.Read(t.fd, buf)
		}
	}
}

// makeRaw switches the tty to raw mode, discarding input not yet read
// (TCSETSF).
func (t *terminal) makeRaw() {
	if t.saved == nil {
		return
	}
	raw := *t.saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	_ = unix.IoctlSetTermios(t.fd, unix.TCSETSF, &raw)
}

// read reads what is typed, retrying interrupted reads.
func (t *terminal) read(buf []byte) (int, error) {
	for {
		n, err := unix.Read(t.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil && n == 0 {
			return 0, errors.New("end of input")
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}

// restore switches bracketed paste off and puts the tty back as it was.
func (t *terminal) restore() {
	if t.saved == nil {
		return
	}
	_, _ = unix.Write(1, []byte("\x1b[?2004l"))
	_ = unix.IoctlSetTermios(t.fd, unix.TCSETS, t.saved)
}

// parser turns raw input into messages: a bracketed paste (ESC[200~ …
// ESC[201~) accumulates text, with its line breaks kept; typed characters
// accumulate too; a carriage return outside a paste submits. The first
// swallow carriage returns are dropped instead (the text stays pending), a
// stand-in for a submit key the agent did not take.
//
// While keys holds true (a permission dialog of the modelled flow has the
// focus: permissions.go) every key outside a paste is a key event instead
// (inputKey: "1", "enter", "escape", "up", "down", …) and a paste is
// dropped whole (inputIgnored, with its text); typed text pending before
// stays pending.
type parser struct {
	paste   bool
	text    []byte
	esc     []byte // the escape sequence being read, nil outside one
	swallow int
	// dropWithin: a carriage return this soon after a paste's end is a
	// newline (the Gemini CLI's), pasteEnd when the last paste ended.
	dropWithin time.Duration
	pasteEnd   time.Time
	keys       *atomic.Bool // nil: never in key mode
	pasteFrom  int          // where in text the current paste began
}

// inputKind says what one byte of input amounted to.
type inputKind int

const (
	inputNone      inputKind = iota // nothing yet
	inputSubmit                     // a message was submitted
	inputEmpty                      // a carriage return with nothing typed
	inputSwallowed                  // a carriage return was swallowed
	inputExit                       // the agent exits with code (a declined consent screen)
	inputKey                        // a key pressed while a dialog has the focus (text: its name)
	inputIgnored                    // a paste a dialog dropped (text: the paste)
)

// input is what feedEvent returns: its kind and, for a submit or a
// swallowed return, the (pending) text.
type input struct {
	kind inputKind
	text string
	code int // inputExit's status
}

// feed takes one byte and returns a message when it submits one.
func (p *parser) feed(b byte) (string, bool) {
	in := p.feedEvent(b)
	return in.text, in.kind == inputSubmit
}

// feedEvent takes one byte and says what it did.
func (p *parser) feedEvent(b byte) input {
	if p.esc != nil {
		return p.feedEscape(b)
	}
	if b == 0x1b {
		p.esc = []byte{b}
		return input{}
	}
	if p.paste {
		if b == '\r' {
			b = '\n'
		}
		p.text = append(p.text, b)
		return input{}
	}
	if p.keyMode() {
		switch {
		case b == '\r':
			return input{kind: inputKey, text: "enter"}
		case b >= 0x20 && b != 0x7f:
			return input{kind: inputKey, text: string(rune(b))}
		}
		return input{}
	}
	return p.feedText(b)
}

// feedEscape takes one byte of an escape sequence; a whole CSI sequence
// starts or ends a bracketed paste, or is an arrow key while a dialog has
// the focus.
func (p *parser) feedEscape(b byte) input {
	p.esc = append(p.esc, b)
	switch {
	case len(p.esc) == 2 && b != '[':
		p.esc = nil
	case len(p.esc) > 2 && b >= 0x40 && b <= 0x7e:
		seq := string(p.esc)
		p.esc = nil
		return p.sequence(seq)
	case len(p.esc) > 32:
		p.esc = nil
	}
	return input{}
}

// sequence acts on one whole CSI sequence.
func (p *parser) sequence(seq string) input {
	switch seq {
	case "\x1b[200~":
		p.paste, p.pasteFrom = true, len(p.text)
	case "\x1b[201~":
		p.paste = false
		p.pasteEnd = time.Now()
		if p.keyMode() && p.pasteFrom <= len(p.text) {
			pasted := string(p.text[p.pasteFrom:])
			p.text = p.text[:p.pasteFrom]
			return input{kind: inputIgnored, text: pasted}
		}
	case "\x1b[A", "\x1b[B":
		if p.keyMode() && !p.paste {
			return input{kind: inputKey, text: map[string]string{"\x1b[A": "up", "\x1b[B": "down"}[seq]}
		}
	}
	return input{}
}

// feedText takes one byte typed at the prompt: Enter submits (or is
// swallowed, as the CLI swallows one right after a paste), backspace
// erases.
func (p *parser) feedText(b byte) input {
	switch {
	case b == '\r':
		if p.dropWithin > 0 && !p.pasteEnd.IsZero() && time.Since(p.pasteEnd) < p.dropWithin {
			p.text = append(p.text, '\n')
			return input{kind: inputSwallowed, text: string(p.text)}
		}
		if p.swallow > 0 {
			p.swallow--
			return input{kind: inputSwallowed, text: string(p.text)}
		}
		if len(p.text) == 0 {
			return input{kind: inputEmpty}
		}
		m := string(p.text)
		p.text = nil
		return input{kind: inputSubmit, text: m}
	case b == 0x7f || b == 0x08:
		if len(p.text) > 0 {
			p.text = p.text[:len(p.text)-1]
		}
	case b == '\n' || b == '\t' || b >= 0x20:
		p.text = append(p.text, b)
	}
	return input{}
}

// keyMode reports whether a dialog has the focus.
func (p *parser) keyMode() bool { return p.keys != nil && p.keys.Load() }

// endOfRead is called when a read's bytes are all fed: an escape byte that
// ended the read, in key mode, was the Escape key (a terminal sends a key's
// whole sequence in one write).
func (p *parser) endOfRead() input {
	if p.keyMode() && !p.paste && len(p.esc) == 1 {
		p.esc = nil
		return input{kind: inputKey, text: "escape"}
	}
	return input{}
}
