// Package proctree reads a process's ancestry from the kernel: who a
// socket peer is below, and whether a process runs in a tmux pane. It
// links the standard library and x/sys alone, so the CLI's own check of
// itself costs none of the service's libraries (decisions D37).
package proctree

import "strings"

// MaxChain bounds the walk up a process's ancestors.
const MaxChain = 64

// Proc is one process of an ancestry.
type Proc struct {
	PID  int
	Comm string
}

// Ancestry is pid and its ancestors, nearest first (at most MaxChain), as
// the kernel reports them now.
func Ancestry(pid int) []Proc {
	var chain []Proc
	for pid > 1 && len(chain) < MaxChain {
		p, parent, ok := processOf(pid)
		if !ok {
			break
		}
		chain = append(chain, p)
		pid = parent
	}
	return chain
}

// UnderTmux reports whether a process of chain is a tmux server: only a
// process below one can be in an agent's pane, so no other costs a tmux
// query.
func UnderTmux(chain []Proc) bool {
	for _, p := range chain {
		if strings.HasPrefix(p.Comm, "tmux") {
			return true
		}
	}
	return false
}

// PIDs are chain's pids, nearest first.
func PIDs(chain []Proc) []int {
	out := make([]int, len(chain))
	for i, p := range chain {
		out[i] = p.PID
	}
	return out
}

// Chain is pid and its ancestors, nearest first, and whether one of them
// is a tmux server (only then can pid run in an agent's pane).
func Chain(pid int) ([]int, bool) {
	chain := Ancestry(pid)
	return PIDs(chain), UnderTmux(chain)
}
