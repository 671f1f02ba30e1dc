package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procFS is the default Processes: it reads /proc and signals with kill(2).
type procFS struct{}

// procStat is what the runner reads from /proc/<pid>/stat.
type procStat struct {
	state byte
	ppid  int
	start uint64 // field 22, starttime in clock ticks since boot
}

// readStat parses /proc/<pid>/stat ("pid (comm) state ppid … starttime …").
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procStat{}, err
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, err
	}
	return procStat{state: f[0][0], ppid: ppid, start: start}, nil
}

// Tree returns each running pid of roots and all its descendants, walking
// the parent links of every process in /proc, so children that moved to
// their own process group or session are found too.
func (procFS) Tree(roots []int) []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	stats := map[int]procStat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		stats[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var out []Proc
	seen := map[int]bool{}
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st, ok := stats[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, Proc{Pid: pid, Start: st.start})
		queue = append(queue, children[pid]...)
	}
	return out
}

// Alive reports whether p still runs: same start time, not a zombie.
func (procFS) Alive(p Proc) bool {
	st, err := readStat(p.Pid)
	if err != nil || st.start != p.Start {
		return false
	}
	return st.state != 'Z' && st.state != 'X' && st.state != 'x'
}

// Signal sends sig to p unless p is gone or its pid was reused.
func (fs procFS) Signal(p Proc, sig syscall.Signal) error {
	if !fs.Alive(p) {
		return nil
	}
	if err := unix.Kill(p.Pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	return nil
}
