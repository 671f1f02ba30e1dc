package proctree

import (
	"os"
	"runtime"
	"testing"
)

// Ancestry reads this process and its parent from the kernel, nearest
// first.
func TestAncestry_ReadsThisProcessAndItsParent(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("reads the process table on Linux and macOS only")
	}
	chain := Ancestry(os.Getpid())
	if len(chain) < 2 || chain[0].PID != os.Getpid() || chain[1].PID != os.Getppid() || chain[0].Comm == "" {
		t.Fatalf("Ancestry(self) = %+v, want this process (%d) then its parent (%d)", chain, os.Getpid(), os.Getppid())
	}
	if pids, _ := Chain(os.Getpid()); len(pids) != len(chain) || pids[1] != os.Getppid() {
		t.Fatalf("Chain(self) = %v, want the pids of %+v", pids, chain)
	}
	if got := Ancestry(0); got != nil {
		t.Fatalf("Ancestry(0) = %+v, want none", got)
	}
}

// Only a tmux server in the chain puts a process below a pane.
func TestUnderTmux_NeedsATmuxServerInTheChain(t *testing.T) {
	shell := []Proc{{PID: 10, Comm: "bash"}, {PID: 9, Comm: "sshd"}}
	if UnderTmux(shell) {
		t.Fatalf("%+v is under tmux", shell)
	}
	pane := append([]Proc{{PID: 11, Comm: "claude"}}, Proc{PID: 8, Comm: "tmux: server"})
	if !UnderTmux(pane) {
		t.Fatalf("%+v is not under tmux", pane)
	}
	if got := PIDs(pane); len(got) != 2 || got[0] != 11 || got[1] != 8 {
		t.Fatalf("PIDs = %v", got)
	}
}
