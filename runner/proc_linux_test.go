package runner

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestProcFS_Linux: the default Processes finds this test and a child it
// starts in its tree, sees the child alive, signals it, and sees it gone;
// a wrong start time is never alive.
func TestProcFS_Linux(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // its own session: still found by parent link
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var fs procFS
	var child *Proc
	for _, p := range fs.Tree([]int{os.Getpid()}) {
		if p.Pid == cmd.Process.Pid {
			child = &p
		}
	}
	if child == nil {
		t.Fatalf("the tree of %d lacks its child %d", os.Getpid(), cmd.Process.Pid)
	}
	if !fs.Alive(*child) {
		t.Fatal("the child is not alive")
	}
	if fs.Alive(Proc{Pid: child.Pid, Start: child.Start + 1}) {
		t.Fatal("a different start time counts as alive")
	}
	if err := fs.Signal(*child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	if fs.Alive(*child) {
		t.Fatal("the reaped child is alive")
	}
	if err := fs.Signal(*child, syscall.SIGTERM); err != nil {
		t.Fatalf("signalling a process already gone: %v", err)
	}
}
