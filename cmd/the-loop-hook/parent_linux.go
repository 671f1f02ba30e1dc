package main

import (
	"context"
	"os"
	"syscall"
)

// parentGone is a context ended when the process that ran this hook
// exits. Claude Code ends a PermissionRequest hook whose dialog a key
// answered with SIGTERM to the shell it ran the hook command in, which
// does not pass it on (dash runs the command as its child): the kernel's
// parent-death signal (PR_SET_PDEATHSIG) tells this program instead, so
// its request ends and the service records the key's answer.
func parentGone(ctx context.Context) (context.Context, context.CancelFunc) {
	ppid := os.Getppid()
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0)
	ctx, cancel := signalled(ctx)
	if os.Getppid() != ppid { // gone before the signal was asked for
		cancel()
	}
	return ctx, cancel
}
