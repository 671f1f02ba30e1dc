//go:build !linux && !darwin

package proctree

// processOf knows no process on this system.
func processOf(int) (Proc, int, bool) { return Proc{}, 0, false }
