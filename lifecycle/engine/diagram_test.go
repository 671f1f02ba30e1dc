package engine

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/looplab/fsm"
)

var update = flag.Bool("update", false, "rewrite docs/machines.md from the machine tables")

// diagram draws a machine table as a mermaid stateDiagram-v2: one arrow per
// (source, destination), labelled with every event that takes it, in the
// order the table first names them.
func diagram(table fsm.Events) string {
	type edge struct{ src, dst string }
	var order []edge
	labels := map[edge][]string{}
	for _, row := range table {
		for _, src := range row.Src {
			e := edge{src, row.Dst}
			if _, ok := labels[e]; !ok {
				order = append(order, e)
			}
			labels[e] = append(labels[e], row.Name)
		}
	}
	var b strings.Builder
	b.WriteString("```mermaid\nstateDiagram-v2\n")
	named := map[string]bool{}
	for _, e := range order {
		for _, st := range []string{e.src, e.dst} {
			if mermaidID(st) != st && !named[st] {
				named[st] = true
				fmt.Fprintf(&b, "    state \"%s\" as %s\n", st, mermaidID(st))
			}
		}
	}
	b.WriteString("    [*] --> absent\n")
	for _, e := range order {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", mermaidID(e.src), mermaidID(e.dst), strings.Join(labels[e], ", "))
	}
	b.WriteString("```\n")
	return b.String()
}

// mermaidID is a state as mermaid names it (no '-').
func mermaidID(state string) string { return strings.ReplaceAll(state, "-", "_") }

// machinesDoc is docs/machines.md as the tables draw it.
func machinesDoc() string {
	return `# The two state machines

Generated from the tables in ` + "`lifecycle/engine/machine.go`" + ` and
` + "`lifecycle/engine/workitem_machine.go`" + ` by ` + "`lifecycle/engine/diagram_test.go`" + `; do not edit by hand —
run ` + "`go test ./lifecycle/engine -run TestMachines_Diagram -update`" + ` after changing a table.
Each table's rows carry a comment saying why an unusual row exists.

The states with a claim (first-start, starting, stopping, reopening,
respawning) are a stored status plus an in-flight claim (a pid and a time):
concurrent verbs on one session act once, and a process killed
mid-transition leaves a claim the next verb recognises as stale and
settles (recover when its pane is live and tagged, abandon otherwise).

## Standing sessions

` + diagram(transitions) + `
## Work-item sessions

` + diagram(workItemTransitions)
}

func TestMachines_Diagram(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "machines.md")
	got := machinesDoc()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is not what the machine tables draw; run go test ./lifecycle -run TestMachines_Diagram -update\n--- got\n%s", path, got)
	}
}
