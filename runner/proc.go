package runner

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"syscall"
)

// procFS is the default Processes: it reads the kernel's process table
// (/proc on Linux, sysctl kern.proc on macOS; proc_<os>.go) and signals
// with kill(2). The parsing, the tree walk and the start-time checks are
// here, shared by every system and unit tested on Linux.
type procFS struct{}

// procStat is what the runner knows of one process.
type procStat struct {
	state byte   // 'Z' or 'X' (also 'x') for a process that is gone; anything else runs
	ppid  int    // parent pid
	start uint64 // start time in the system's own unit (Linux: clock ticks since boot; macOS: µs since the epoch)
}

// procTable is a snapshot of the process table: pid → its procStat.
type procTable map[int]procStat

// Tree returns each running pid of roots and all its descendants, walking
// the parent links of every process in the table, so children that moved
// to their own process group or session are found too. The table is one
// read after the call began, shared with the calls that wait for it at
// once (tables, a fresh): two hundred stops read it a few times, not
// two hundred.
func (procFS) Tree(roots []int) []Proc {
	table, err := tables.read(readProcTable)
	if err != nil {
		return nil
	}
	return table.tree(roots)
}

// tables is the process's one reader of the process table.
var tables = newFresh[procTable]()

// Alive reports whether p still runs: same start time, not a zombie.
func (procFS) Alive(p Proc) bool {
	st, err := readProc(p.Pid)
	return err == nil && st.runs(p)
}

// Signal sends sig to p unless p is gone or its pid was reused.
func (fs procFS) Signal(p Proc, sig syscall.Signal) error {
	if !fs.Alive(p) {
		return nil
	}
	if err := killProc(p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// runs reports whether st is the process p names (the same start time, so
// not a reused pid) and has not exited (not a zombie).
func (st procStat) runs(p Proc) bool {
	return st.start == p.Start && st.state != 'Z' && st.state != 'X' && st.state != 'x'
}

// tree returns roots and all their descendants found in t, breadth first,
// each once; a root not in t is skipped.
func (t procTable) tree(roots []int) []Proc {
	children := map[int][]int{}
	for pid, st := range t {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var out []Proc
	seen := map[int]bool{}
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st, ok := t[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, Proc{Pid: pid, Start: st.start})
		queue = append(queue, children[pid]...)
	}
	return out
}

// parseProcStat parses a Linux /proc/<pid>/stat line ("pid (comm) state
// ppid … starttime …"; starttime is field 22). comm may hold spaces and
// parentheses, so the fields are read after its last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("unreadable stat line %q: no (comm)", data)
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("unreadable stat line %q: %d fields after (comm), want at least 20", data, len(f))
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procStat{}, fmt.Errorf("unreadable stat line %q: ppid: %w", data, err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("unreadable stat line %q: starttime: %w", data, err)
	}
	return procStat{state: f[0][0], ppid: ppid, start: start}, nil
}

// darwinZombie is SZOMB, macOS's p_stat of a process that has exited but
// not been reaped (sys/proc.h).
const darwinZombie = 5

// darwinStat makes a procStat of the fields macOS's kinfo_proc gives
// (kp_eproc.e_ppid, kp_proc.p_stat, kp_proc.p_starttime): the start time
// becomes microseconds since the epoch, and SZOMB the state 'Z'.
func darwinStat(ppid int32, stat int8, startSec int64, startUsec int32) procStat {
	st := procStat{state: 'R', ppid: int(ppid), start: uint64(startSec)*1_000_000 + uint64(startUsec)}
	if stat == darwinZombie {
		st.state = 'Z'
	}
	return st
}

// ProcessStart returns the start time of the running process pid, in the
// system's own unit (see procStat.start); ok is false when no such process
// runs (or it is a zombie). A pid recorded with its start time names that
// process only: once the kernel reuses the pid — after a reboot, say — the
// start time differs.
func ProcessStart(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	st, err := readProc(pid)
	if err != nil || st.state == 'Z' || st.state == 'X' || st.state == 'x' {
		return 0, false
	}
	return st.start, true
}
