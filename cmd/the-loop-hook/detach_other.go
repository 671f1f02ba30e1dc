//go:build !unix

package main

import "syscall"

// detached is no change where there are no sessions.
func detached() *syscall.SysProcAttr { return nil }
