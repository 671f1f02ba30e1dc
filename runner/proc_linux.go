package runner

import (
	"os"
	"strconv"
)

// readProc reads /proc/<pid>/stat.
func readProc(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

// readProcTable reads the stat of every process in /proc; a process that
// ends while the table is read is left out.
func readProcTable() (procTable, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	table := procTable{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := readProc(pid); err == nil {
			table[pid] = st
		}
	}
	return table, nil
}
