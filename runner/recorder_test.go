package runner

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// call is one recorded tmux invocation.
type call struct {
	Args      []string
	Stdin     string
	Cancelled bool // its ctx was done: it got no answer, as with ExecCommander
}

// reply is a canned answer: stdout, or err.
type reply struct {
	out string
	err error
}

// recorder is a Commander that records every argv and answers from a
// script keyed by the command line after the global flags; each key's
// replies are used in order, the last one repeating. Unscripted commands
// succeed with no output. A call whose ctx is done is recorded and gets no
// answer (*NoAnswerError), as ExecCommander's would. after, when set, runs
// after each answered call with its command line (e.g. to cancel a ctx).
type recorder struct {
	mu      sync.Mutex
	calls   []call
	replies map[string][]reply
	after   func(cmdline string)
}

func newRecorder() *recorder { return &recorder{replies: map[string][]reply{}} }

// on scripts the replies to one command line (args joined by spaces).
func (r *recorder) on(cmdline string, rs ...reply) *recorder {
	r.replies[cmdline] = rs
	return r
}

func (r *recorder) Run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	var in string
	if stdin != nil {
		b, _ := io.ReadAll(stdin)
		in = string(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{Args: append([]string(nil), args...), Stdin: in, Cancelled: ctx.Err() != nil})
	if err := ctx.Err(); err != nil {
		return nil, &NoAnswerError{Args: args, Err: err}
	}
	key := strings.Join(stripGlobal(args), " ")
	if r.after != nil {
		defer r.after(key)
	}
	rs := r.replies[key]
	if len(rs) == 0 {
		return nil, nil
	}
	rp := rs[0]
	if len(rs) > 1 {
		r.replies[key] = rs[1:]
	}
	if ee, ok := rp.err.(*ExitError); ok {
		cp := *ee
		cp.Args = args
		return []byte(rp.out), &cp
	}
	return []byte(rp.out), rp.err
}

// argvs returns the recorded argument lists.
func (r *recorder) argvs() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]string, len(r.calls))
	for i, c := range r.calls {
		out[i] = c.Args
	}
	return out
}

// cancelled returns the command lines (after the global flags) of the
// calls made with a done ctx.
func (r *recorder) cancelled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c.Cancelled {
			out = append(out, strings.Join(stripGlobal(c.Args), " "))
		}
	}
	return out
}

// stdins returns the recorded stdin of each call.
func (r *recorder) stdins() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.calls))
	for i, c := range r.calls {
		out[i] = c.Stdin
	}
	return out
}

func stripGlobal(args []string) []string {
	for len(args) >= 2 && (args[0] == "-L" || args[0] == "-f") {
		args = args[2:]
	}
	return args
}

// exit1 is tmux's answer for a missing session.
func exit1(stderr string) reply { return reply{err: &ExitError{Code: 1, Stderr: stderr}} }

// fakeProcs is a Processes with a scripted process table.
type fakeProcs struct {
	mu     sync.Mutex
	tree   map[int][]Proc // root pid -> its tree
	alive  map[Proc]bool
	dieOn  map[Proc]syscall.Signal // the signal that ends a process
	linger map[Proc]int            // how many Alive checks a process survives its fatal signal by
	dying  map[Proc]bool
	signal []string
}

func (f *fakeProcs) Tree(pids []int) []Proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Proc
	for _, pid := range pids {
		for _, p := range f.tree[pid] {
			if f.alive[p] {
				out = append(out, p)
			}
		}
	}
	return out
}

func (f *fakeProcs) Alive(p Proc) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dying[p] {
		if f.linger[p]--; f.linger[p] <= 0 {
			f.alive[p], f.dying[p] = false, false
		}
		return true
	}
	return f.alive[p]
}

func (f *fakeProcs) Signal(p Proc, sig syscall.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signal = append(f.signal, strings.ToUpper(sigName(sig))+" "+strconv.Itoa(p.Pid))
	if d, ok := f.dieOn[p]; ok && (d == sig || sig == syscall.SIGKILL) {
		if f.linger[p] > 0 {
			if f.dying == nil {
				f.dying = map[Proc]bool{}
			}
			f.dying[p] = true
		} else {
			f.alive[p] = false
		}
	}
	return nil
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "term"
	case syscall.SIGKILL:
		return "kill"
	}
	return s.String()
}

// sleeps records the waits of a runner instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

// newTestRunner is a runner on socket "sock" with a recorder, recorded
// sleeps and a fixed buffer name.
func newTestRunner(t *testing.T, rec *recorder, procs Processes) (*Tmux, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	r := New(Options{Socket: "sock", Cmd: rec, Sleep: sl.sleep, Procs: procs, LockDir: t.TempDir()})
	r.bufferName = func() string { return "the-loop-1-abc" }
	return r, sl
}

var _ loop.Runner = (*Tmux)(nil)
