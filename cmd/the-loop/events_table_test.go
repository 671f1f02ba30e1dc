package main

import (
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// columnStarts are the offsets at which each header word begins on the
// header line, and the offsets of the same columns on a row.
func columnAt(line string, col int) int {
	// Columns are separated by at least two spaces.
	idx, start := 0, 0
	for i := 0; i < len(line); {
		if idx == col {
			return start
		}
		j := strings.Index(line[i:], "  ")
		if j < 0 {
			return -1
		}
		i += j
		for i < len(line) && line[i] == ' ' {
			i++
		}
		idx++
		start = i
	}
	if idx == col {
		return start
	}
	return -1
}

func tableEvent(source, name, detail string) loop.Event {
	return loop.Event{TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Source: source, Level: loop.LevelInfo, Event: name,
		Fields: []loop.Field{loop.F("standing", "alpha"), loop.F("detail", detail)}}
}

// TestEventsTable_LastColumnIsNotPadded: a long detail on one row does not
// pad the other lines with trailing spaces.
func TestEventsTable_LastColumnIsNotPadded(t *testing.T) {
	var b strings.Builder
	c := &EventsCmd{Format: "table"}
	if err := c.print(&b, []loop.Event{tableEvent("cli", "standing.started", strings.TrimSpace(strings.Repeat("long ", 40))), tableEvent("cli", "standing.said", "x")}, true); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("padded line %q", line)
		}
	}
}

// TestEventsTable_TheSessionColumnSaysSession: the column that holds a
// standing session's ref (standing:NAME) or a work item's is headed
// "Session", not "Work item".
func TestEventsTable_TheSessionColumnSaysSession(t *testing.T) {
	var b strings.Builder
	c := &EventsCmd{Format: "table"}
	if err := c.print(&b, []loop.Event{tableEvent("cli", "standing.started", "x")}, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	head, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(head) < 5 || head[4] != "Session" || strings.Contains(lines[0], "Work item") || row[4] != "standing:alpha" {
		t.Fatalf("the events table reads\n%s", b.String())
	}
}

// TestEventsTable_FollowRowsLineUpWithTheHeader: rows --follow prints after
// the header, with a longer source and event name than the first batch,
// start each column where the header's does.
func TestEventsTable_FollowRowsLineUpWithTheHeader(t *testing.T) {
	var b strings.Builder
	c := &EventsCmd{Format: "table", Follow: true}
	c.layout.widths = followWidths()
	if err := c.print(&b, []loop.Event{tableEvent("cli", "standing.said", "x")}, true); err != nil {
		t.Fatal(err)
	}
	if err := c.print(&b, []loop.Event{tableEvent("channels", "standing.conversation_changed", "from=abc")}, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	for col := 1; col <= 5; col++ {
		want := columnAt(lines[0], col)
		for _, l := range lines[1:] {
			if got := columnAt(l, col); got != want {
				t.Errorf("column %d starts at %d in %q, at %d in the header %q", col, got, l, want, lines[0])
			}
		}
	}
}

// TestEvents_APIRequestIsDebugAndOutOfTheDefaultTable: a state change
// through the service records api.request at debug level; the table
// leaves it out unless --level debug asks, jsonl carries it.
func TestEvents_APIRequestIsDebugAndOutOfTheDefaultTable(t *testing.T) {
	e := supervisedEnv(t, "", "")
	e.startedOnce()
	e.must(0, "standing", "stop", "supervisor")
	var reqs []loop.Event
	waitFor(t, "api.request", func() bool { reqs = e.events("--type", "api.request"); return len(reqs) > 0 })
	for _, ev := range reqs {
		if ev.Level != loop.LevelDebug {
			t.Errorf("api.request at %s: %+v", ev.Level, ev)
		}
	}
	if r := e.must(0, "events", "--limit", "0"); strings.Contains(r.stdout, "api.request") || !strings.Contains(r.stdout, "standing.stopped") {
		t.Errorf("the default table: %s", r)
	}
	if r := e.must(0, "events", "--limit", "0", "--level", "debug"); !strings.Contains(r.stdout, "api.request") {
		t.Errorf("--level debug: %s", r)
	}
}
