package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
)

// TestRenderStop_PrintsInTheOrderItActs: stop stops the sessions, then the
// service, and prints them in that order.
func TestRenderStop_PrintsInTheOrderItActs(t *testing.T) {
	rep := loop.Report{
		Services:         []loop.ServiceRow{{Service: "service", Enabled: true, Outcome: "stopped", Detail: "pid 7"}},
		StandingSessions: []loop.StandingRow{{Name: "one", Outcome: loop.OutcomeStopped}},
	}
	var out, errb bytes.Buffer
	renderStop(&out, &errb, rep)
	sessions, service := strings.Index(out.String(), "standing sessions:\none"), strings.Index(out.String(), "service  stopped")
	if sessions < 0 || service < 0 || sessions > service {
		t.Fatalf("stop's report:\n%s", out.String())
	}
}

// TestStatusWords_OneVocabulary: status and standing list word a session's
// status alike, from the row's own status.
func TestStatusWords_OneVocabulary(t *testing.T) {
	rows := []loop.StandingRow{
		{Name: "live", Status: loop.StatusRunning, Running: true, Declared: true, AutoStart: true, Activity: loop.ActivityIdle},
		{Name: "gone", Status: loop.StatusRunning, Running: false, Declared: true, AutoStart: true},
		{Name: "halted", Status: loop.StatusStopped, Declared: true, AutoStart: true},
		{Name: "never", Status: loop.StatusAbsent, Declared: true, AutoStart: true},
		{Name: "gaveup", Status: loop.StatusFailed, Declared: true, AutoStart: true},
	}
	want := map[string]string{"live": "running", "gone": "not running", "halted": "stopped", "never": "absent", "gaveup": "failed"}
	var status, list, hint bytes.Buffer
	renderStatus(&status, loop.Report{StandingSessions: rows})
	renderList(&list, &hint, rows)
	for _, r := range rows {
		line := func(out string) string {
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, r.Name+" ") {
					return l
				}
			}
			return ""
		}
		if l := line(status.String()); !strings.Contains(l, " "+want[r.Name]+" ") || !strings.Contains(l, " [declared]") {
			t.Errorf("status words %s as %q, want %q", r.Name, l, want[r.Name])
		}
		if l := line(list.String()); !strings.Contains(l, "  "+want[r.Name]+"  ") {
			t.Errorf("list words %s as %q, want %q", r.Name, l, want[r.Name])
		}
	}
}

// TestRenderList_DescriptionAndAttach: standing list shows each session's
// description (on one line) and, on stderr, the command that attaches to a
// running one.
func TestRenderList_DescriptionAndAttach(t *testing.T) {
	rows := []loop.StandingRow{
		{Name: "idle", Status: loop.StatusStopped, Description: "Nothing\nmuch"},
		{Name: "ops", Status: loop.StatusRunning, Running: true, Description: "Watches the work items."},
	}
	var out, errb bytes.Buffer
	renderList(&out, &errb, rows)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "  Description") || !strings.HasSuffix(lines[1], "  Nothing much") ||
		!strings.HasSuffix(lines[2], "  Watches the work items.") {
		t.Fatalf("table:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "the-loop standing attach ops") || !strings.Contains(errb.String(), "--write") {
		t.Fatalf("stderr: %q", errb.String())
	}
	errb.Reset()
	renderList(&out, &errb, rows[:1])
	if errb.Len() != 0 {
		t.Fatalf("an attach hint with nothing running: %q", errb.String())
	}
}

// TestRenderSessions_ActivityColumn: sessions list shows the hooks'
// activity, as standing list does.
func TestRenderSessions_ActivityColumn(t *testing.T) {
	var out, errb bytes.Buffer
	renderSessions(&out, &errb, []loop.WorkItemRow{{Ref: "github:o/r#1", Harness: "claude", Status: loop.SessionActive, Activity: loop.ActivityWorking}})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "Status  Activity") || !strings.Contains(lines[1], "active  working") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// noRows are the commands that print no rows, so take no --format: they
// replace the process (attach), print a script, a secret or a link, run a
// service, or are the hooks', tmux's and the CLI's own.
var noRows = map[string]bool{
	"serve": true, "service install": true, "service uninstall": true, "standing attach": true, "token": true,
	"dashboard": true, "config schema": true, "config validate": true, "completion": true, "hook": true, "mcp": true,
	"internal-exec": true, "internal-announce": true, "__complete": true, "init": true,
}

// TestFormatJSON_OnEveryVerbThatPrintsRows: every command but noRows takes
// --format with a json value.
func TestFormatJSON_OnEveryVerbThatPrintsRows(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("the-loop"))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *kong.Node)
	checked := 0
	walk = func(n *kong.Node) {
		if len(n.Children) > 0 {
			for _, c := range n.Children {
				walk(c)
			}
			return
		}
		path := strings.TrimPrefix(n.FullPath(), "the-loop ")
		if noRows[path] {
			return
		}
		checked++
		for _, f := range n.Flags {
			if f.Name == "format" && strings.Contains(f.Tag.Enum, "json") {
				return
			}
		}
		t.Errorf("`the-loop %s` prints rows but takes no --format json", path)
	}
	walk(parser.Model.Node)
	if checked < 20 {
		t.Fatalf("only %d commands checked", checked)
	}
}

// TestRenderControl_DetailDoesNotRepeatTheOutcome: "started loop-… (…)"
// under the outcome started prints as "loop-… (…)"; a detail that says
// something else is kept whole.
func TestRenderControl_DetailDoesNotRepeatTheOutcome(t *testing.T) {
	var out, errb bytes.Buffer
	renderControl(&out, &errb, []loop.StandingRow{
		{Name: "a", Outcome: loop.OutcomeStarted, Detail: "started loop-standing-a (claude 123)"},
		{Name: "b", Outcome: loop.OutcomeDeleted, Detail: "stopped and forgot loop-standing-b"},
		{Name: "c", Outcome: loop.OutcomeResumed, Detail: "resumed loop-standing-c (claude 9)"},
	})
	want := "a  started          loop-standing-a (claude 123)\nb  deleted          stopped and forgot loop-standing-b\nc  resumed          loop-standing-c (claude 9)\n"
	if out.String() != want {
		t.Fatalf("rows:\n%q\nwant:\n%q", out.String(), want)
	}
}

// TestRenderStatus_LongNamesLineUp: a name longer than the column's eleven
// characters widens it for every row, so the status words line up.
func TestRenderStatus_LongNamesLineUp(t *testing.T) {
	var b bytes.Buffer
	renderStatus(&b, loop.Report{StandingSessions: []loop.StandingRow{
		{Name: "a-rather-long-name", Status: loop.StatusRunning, Running: true, Declared: true, AutoStart: true},
		{Name: "short", Status: loop.StatusStopped, Declared: true, AutoStart: true},
	}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Index(lines[1], "running") != strings.Index(lines[2], "stopped") {
		t.Fatalf("status:\n%s", b.String())
	}
}

// TestRenderStatus_UptimeRestartsAndLastExit: a running session's status
// line says how long it has been up, how often the supervisor restarted it
// and how it last exited; a session that is down says why.
func TestRenderStatus_UptimeRestartsAndLastExit(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	one := 1
	up := loop.StandingRow{Name: "ops", Status: loop.StatusRunning, Running: true, Declared: true, AutoStart: true,
		StartedAt: now.Add(-(2*time.Hour + 13*time.Minute)).Format(loop.RecordTimeFormat), Restarts: 3,
		LastExit: &loop.ExitInfo{Code: &one, At: now.Add(-5 * time.Minute).Format(loop.RecordTimeFormat)}}
	if got, want := sessionNotes(up, now), "up 2h13m · 3 restarts · last exit: status 1, 5m0s ago"; got != want {
		t.Fatalf("notes %q, want %q", got, want)
	}
	down := loop.StandingRow{Name: "idle", Status: loop.StatusStopped, Declared: true, AutoStart: true,
		DownReason: "its start failed: harness CLI 'claude' not found on PATH (2026-12-02T00:59:00Z)"}
	if got := sessionNotes(down, now); got != "down: "+down.DownReason {
		t.Fatalf("notes %q", got)
	}
	var b bytes.Buffer
	renderStatus(&b, loop.Report{StandingSessions: []loop.StandingRow{up, down}})
	if !strings.Contains(b.String(), "ops         running [declared]  up ") || !strings.Contains(b.String(), "· 3 restarts · last exit: status 1, ") ||
		!strings.Contains(b.String(), "idle        stopped [declared]  down: its start failed: harness CLI 'claude'") {
		t.Fatalf("status:\n%s", b.String())
	}
	var list, hint bytes.Buffer
	renderList(&list, &hint, []loop.StandingRow{up, down})
	lines := strings.Split(strings.TrimSuffix(list.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "  Up ") || !strings.Contains(lines[0], "  Restarts  Last exit ") ||
		!strings.Contains(lines[1], "  3  ") || !strings.Contains(lines[1], "  status 1, ") || !strings.Contains(lines[2], "  0  ") ||
		lines[3] != "idle is down: "+down.DownReason {
		t.Fatalf("list:\n%s", list.String())
	}
}

// TestLogs_InterleaveKeepsTheEventLogsOrder: the service log's lines go
// between the events by time, and the events stay in the log's order even
// where a held hook event carries an earlier time than the start before it.
func TestLogs_InterleaveKeepsTheEventLogsOrder(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 12, 2, 1, 0, s, 0, time.UTC) }
	service := []logLine{{Time: at(1), Source: "service", Text: "listening"}, {Time: at(5), Source: "service", Text: "shutting down"}}
	evs := []loop.Event{
		{Seq: 1, TS: at(2), Event: "standing.exited", Fields: []loop.Field{loop.F("standing", "ops")}},
		{Seq: 2, TS: at(4), Event: "standing.resumed", Fields: []loop.Field{loop.F("standing", "ops")}},
		{Seq: 3, TS: at(3), Event: "standing.turn_started", Fields: []loop.Field{loop.F("standing", "ops")}},
	}
	var got []string
	for _, l := range interleave(service, evs) {
		got = append(got, l.Source+" "+l.Text)
	}
	want := []string{"service listening", "ops standing.exited", "ops standing.resumed", "ops standing.turn_started", "service shutting down"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("interleaved:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
