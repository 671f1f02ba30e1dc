package runner

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestParseProcStat reads captured /proc/<pid>/stat lines: state, ppid and
// starttime (field 22), past a comm holding spaces and parentheses.
func TestParseProcStat(t *testing.T) {
	data, err := os.ReadFile("testdata/proc-stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got []procStat
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		st, err := parseProcStat(line)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, st)
	}
	want := []procStat{
		{state: 'S', ppid: 0, start: 25},
		{state: 'R', ppid: 4418, start: 52951},
		{state: 'S', ppid: 1, start: 53010},
		{state: 'Z', ppid: 4430, start: 53011},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}

func TestParseProcStat_RefusesTruncatedLines(t *testing.T) {
	for _, line := range []string{
		"",
		"12 no-comm S 1",
		"12 (x) S 1 2 3",
		"12 (x) S notapid 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0",
		"12 (x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0",
		"12 (x) SS 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0",
	} {
		if st, err := parseProcStat([]byte(line)); err == nil {
			t.Errorf("parseProcStat(%q) = %+v, want an error", line, st)
		}
	}
}

// TestProcTableTree: roots and every descendant, breadth first, each once;
// absent roots are skipped and a parent-link cycle does not loop.
func TestProcTableTree(t *testing.T) {
	table := procTable{
		1:  {ppid: 0, start: 1},
		10: {ppid: 1, start: 100},
		11: {ppid: 10, start: 110}, // e.g. moved to its own session: still a child of 10
		12: {ppid: 11, start: 120},
		13: {ppid: 10, start: 130},
		20: {ppid: 1, start: 200}, // a sibling tree, not asked for
		30: {ppid: 31, start: 300},
		31: {ppid: 30, start: 310},
	}
	got := table.tree([]int{10, 99, 10, 30})
	want := []Proc{{10, 100}, {30, 300}, {11, 110}, {13, 130}, {31, 310}, {12, 120}}
	if len(got) != len(want) {
		t.Fatalf("tree = %v, want %v (in any order within a level)", got, want)
	}
	seen := map[Proc]bool{}
	for _, p := range got {
		seen[p] = true
	}
	for _, p := range want {
		if !seen[p] {
			t.Fatalf("tree = %v lacks %v", got, p)
		}
	}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("tree = %v: the roots come first", got)
	}
	if got[len(got)-1] != (Proc{12, 120}) {
		t.Fatalf("tree = %v: the grandchild comes last", got)
	}
	if out := (procTable{}).tree([]int{1}); out != nil {
		t.Fatalf("an empty table gave %v", out)
	}
}

// TestProcStatRuns: a process runs only with the recorded start time (a
// reused pid does not) and when it is not a zombie.
func TestProcStatRuns(t *testing.T) {
	p := Proc{Pid: 7, Start: 42}
	for _, c := range []struct {
		st   procStat
		want bool
	}{
		{procStat{state: 'S', start: 42}, true},
		{procStat{state: 'R', start: 42}, true},
		{procStat{state: 'S', start: 43}, false},
		{procStat{state: 'Z', start: 42}, false},
		{procStat{state: 'X', start: 42}, false},
		{procStat{state: 'x', start: 42}, false},
	} {
		if got := c.st.runs(p); got != c.want {
			t.Errorf("%+v runs %v = %v, want %v", c.st, p, got, c.want)
		}
	}
}

// TestDarwinStat: macOS's kinfo_proc fields map to the same procStat, the
// start time in microseconds (distinct within a second) and SZOMB a zombie.
func TestDarwinStat(t *testing.T) {
	st := darwinStat(321, 2, 1_764_000_000, 250_000) // SRUN
	if st != (procStat{state: 'R', ppid: 321, start: 1_764_000_000_250_000}) {
		t.Fatalf("darwinStat = %+v", st)
	}
	if darwinStat(1, 3, 5, 1).start == darwinStat(1, 3, 5, 2).start {
		t.Fatal("two starts within one second compare equal")
	}
	z := darwinStat(1, darwinZombie, 5, 0)
	if z.runs(Proc{Pid: 9, Start: z.start}) {
		t.Fatal("a zombie (SZOMB) runs")
	}
	if !darwinStat(1, 3, 5, 0).runs(Proc{Pid: 9, Start: 5_000_000}) { // SSLEEP
		t.Fatal("a sleeping process does not run")
	}
}

// The callers that arrive while a read of the process table runs share the
// next read, begun after they called — never the running one's table, read
// before them.
func TestFresh_CallersShareAReadBegunAfterTheirCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newFresh[procTable]()
		var reads atomic.Int32
		release := make(chan struct{})
		readAll := func() (procTable, error) {
			n := reads.Add(1)
			if n == 1 {
				<-release
			}
			return procTable{int(n): {}}, nil
		}
		first := make(chan procTable, 1)
		go func() {
			table, _ := tr.read(readAll)
			first <- table
		}()
		synctest.Wait() // the first read is running
		later := make(chan procTable, 10)
		for range 10 {
			go func() {
				table, _ := tr.read(readAll)
				later <- table
			}()
		}
		synctest.Wait() // the ten wait for it
		close(release)
		if table := <-first; len(table) != 1 || table[1] != (procStat{}) {
			t.Fatalf("the first caller got %v, want the first read's table", table)
		}
		for range 10 {
			if table := <-later; len(table) != 1 {
				t.Fatalf("a later caller got %v", table)
			} else if _, ok := table[2]; !ok {
				t.Fatalf("a caller that came during the first read got %v, want the second read's table", table)
			}
		}
		if n := reads.Load(); n != 2 {
			t.Fatalf("%d reads of the table, want 2 (the ten callers share one)", n)
		}
	})
}
