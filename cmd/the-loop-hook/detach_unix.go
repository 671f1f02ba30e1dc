//go:build unix

package main

import "syscall"

// detached starts a child in a session of its own, so the CLI's end of
// this hook's process group never reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
