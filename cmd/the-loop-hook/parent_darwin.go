package main

import (
	"context"
	"os"
	"syscall"
)

// parentGone is a context ended when the process that ran this hook
// exits (see parent_linux.go): on macOS a kqueue watch of the parent's
// exit (EVFILT_PROC, NOTE_EXIT), which costs no CPU while it waits.
func parentGone(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := signalled(ctx)
	ppid := os.Getppid()
	kq, err := syscall.Kqueue()
	if err != nil {
		return ctx, cancel
	}
	watch := []syscall.Kevent_t{{Ident: uint64(ppid), Filter: syscall.EVFILT_PROC, Flags: syscall.EV_ADD | syscall.EV_ONESHOT, Fflags: syscall.NOTE_EXIT}}
	if _, err := syscall.Kevent(kq, watch, nil, nil); err != nil || os.Getppid() != ppid {
		syscall.Close(kq)
		if err != nil && os.Getppid() == ppid {
			return ctx, cancel
		}
		cancel()
		return ctx, cancel
	}
	go func() {
		defer syscall.Close(kq)
		events := make([]syscall.Kevent_t, 1)
		for {
			n, err := syscall.Kevent(kq, nil, events, nil)
			if err == syscall.EINTR {
				continue
			}
			if n > 0 || err != nil {
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}
