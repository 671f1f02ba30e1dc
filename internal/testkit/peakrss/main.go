// Command peakrss runs its arguments, its standard streams passed
// through, and writes their peak resident set size in KiB to the file
// $PEAKRSS_OUT; it exits with their status. The benchmarks run the-loop
// through it because a child's rusage, read by the process that forked it,
// also counts the forking process's own peak (Linux forks Go's children
// sharing its memory until exec, and exec keeps that memory's high-water
// mark): a test binary's tens of MiB would be the-loop's. This program is
// small, so its own peak is below any the-loop's.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) < 2 || os.Getenv("PEAKRSS_OUT") == "" {
		fmt.Fprintln(os.Stderr, "usage: PEAKRSS_OUT=FILE peakrss PROGRAM [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(1)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if err := os.WriteFile(os.Getenv("PEAKRSS_OUT"), []byte(strconv.FormatInt(int64(ru.Maxrss), 10)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "peakrss:", err)
			os.Exit(1)
		}
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
