package runner

import "golang.org/x/sys/unix"

// readProc reads one process with sysctl kern.proc.pid.<pid> (an absent
// pid is an error: the kernel answers it with no record).
func readProc(pid int) (procStat, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procStat{}, err
	}
	return kinfoStat(kp), nil
}

// readProcTable reads every process with sysctl kern.proc.all.
func readProcTable() (procTable, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	table := make(procTable, len(kps))
	for i := range kps {
		table[int(kps[i].Proc.P_pid)] = kinfoStat(&kps[i])
	}
	return table, nil
}

// kinfoStat picks the fields darwinStat maps.
func kinfoStat(kp *unix.KinfoProc) procStat {
	return darwinStat(kp.Eproc.Ppid, kp.Proc.P_stat, int64(kp.Proc.P_starttime.Sec), int32(kp.Proc.P_starttime.Usec))
}
