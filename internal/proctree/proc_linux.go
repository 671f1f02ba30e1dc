package proctree

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// processOf reads pid's command name and parent from /proc/<pid>/stat.
func processOf(pid int) (Proc, int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, 0, false
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Proc{}, 0, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 2 {
		return Proc{}, 0, false
	}
	parent, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, 0, false
	}
	return Proc{PID: pid, Comm: string(data[open+1 : end])}, parent, true
}
