package main

import (
	"bytes"

	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/servicelog"
)

// LogsCmd is `the-loop logs [NAME] [-f]`: the service log
// (<state.root>/logs/service.log) and the sessions' lifecycle events,
// interleaved by time, as `pm2 logs` shows an app's output. NAME keeps one
// session's; -f follows both until interrupted. It works with or without
// the service: the events come from the service when it answers, else
// from the store.
type LogsCmd struct {
	Name   string `arg:"" optional:"" help:"Only this session's lines: a standing session's name, or a work item's ref." placeholder:"NAME"`
	Follow bool   `short:"f" help:"Keep printing new lines until interrupted."`
	Lines  int    `short:"n" default:"50" help:"How many of the latest lines to show first (0 = none)."`
	Format string `enum:"text,jsonl" default:"text" help:"Output format (text, or jsonl: one object per line, {time, source, text} and the event for an event's line)."`
}

// logLine is one line of the interleaved stream.
type logLine struct {
	Time time.Time `json:"time"`
	// Source is "service" for the service log, else the session the event
	// is of (a standing session's name, a work item's ref).
	Source string      `json:"source"`
	Text   string      `json:"text"`
	Event  *loop.Event `json:"event,omitempty"`
}

// logTailBytes bounds how much of service.log the first screen reads.
const logTailBytes = 1 << 20

// logsPoll is how often -f looks for new lines.
const logsPoll = 500 * time.Millisecond

// picking: the config is loaded tolerantly, as events loads it.
func (c *LogsCmd) picking() picking { return picking{load: loadReading} }

// Run prints the latest lines, then follows with -f.
func (c *LogsCmd) Run(a *App, cfg *config.Config) error {
	if c.Lines < 0 {
		return loop.Invalid("--lines %d: expected 0 (none) or a positive count", c.Lines)
	}
	q, err := c.query()
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	read, done, err := a.eventReader(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { done() }()
	tail := &serviceTail{path: logPath(cfg), name: c.Name}
	first := tail.last(c.Lines)
	q.Limit = c.Lines
	var evs []loop.Event
	if c.Lines > 0 {
		if evs, err = read(q); err != nil {
			return err
		}
	}
	after := lastSeq(evs)
	if c.Follow && after == 0 {
		if latest, err := read(loop.EventQuery{Limit: 1}); err == nil {
			after = lastSeq(latest)
		}
	}
	lines := interleave(first, evs)
	if len(lines) > c.Lines {
		lines = lines[len(lines)-c.Lines:]
	}
	if err := c.print(a.Stdout, lines); err != nil {
		return err
	}
	if !c.Follow {
		if len(lines) == 0 {
			fmt.Fprintf(a.Stderr, "(no lines yet: %s and the event log hold none%s)\n", termSafe(tail.path), c.forName())
		}
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(logsPoll):
		}
		q.After, q.Limit = after, 0
		more, err := read(q)
		if err != nil { // the service started or stopped: read the events where they are now
			done()
			if read, done, err = a.eventReader(ctx, cfg); err != nil {
				read, done = func(loop.EventQuery) ([]loop.Event, error) { return nil, nil }, func() {}
			}
			more = nil
		}
		if n := lastSeq(more); n > after {
			after = n
		}
		if err := c.print(a.Stdout, interleave(tail.more(), more)); err != nil {
			return err
		}
	}
}

// query is the events the command shows: NAME's (any event of that
// session), else every session's lifecycle events; info and above.
func (c *LogsCmd) query() (loop.EventQuery, error) {
	q := loop.EventQuery{Level: loop.LevelInfo}
	switch {
	case c.Name == "":
		q.Types = []string{"standing.*", "session.*", "workspace.*"}
	case strings.ContainsAny(c.Name, ":#"):
		ref, err := loop.ParseWorkItemRef(c.Name)
		if err != nil {
			return q, err
		}
		q.WorkItem = ref.String()
	default:
		if err := loop.CheckName(c.Name); err != nil {
			return q, err
		}
		q.Standing = c.Name
	}
	return q, nil
}

// forName is " for NAME" when a name was given.
func (c *LogsCmd) forName() string {
	if c.Name == "" {
		return ""
	}
	return " for " + termSafe(c.Name)
}

// print writes lines as text ("<time> <source> | <text>") or JSON lines.
func (c *LogsCmd) print(w io.Writer, lines []logLine) error {
	for _, l := range lines {
		if c.Format == "jsonl" {
			b, err := json.Marshal(l)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintf(w, "%s %-12s | %s\n", l.Time.UTC().Format(loop.TimeFormat), termSafe(l.Source), termLine(l.Text))
	}
	return nil
}

// lastSeq is the last event's sequence number (0 when there is none).
func lastSeq(evs []loop.Event) uint64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

// interleave merges the service log's lines and the events by time, the
// service log's first at equal times. Each side keeps its own order: the
// events the log's (a start's event precedes the hooks' events its claim
// held, which were heard earlier), the service log the file's.
func interleave(service []logLine, evs []loop.Event) []logLine {
	out := make([]logLine, 0, len(service)+len(evs))
	i := 0
	for j := range evs {
		ev := evs[j]
		for i < len(service) && !service[i].Time.After(ev.TS) {
			out = append(out, service[i])
			i++
		}
		out = append(out, logLine{Time: ev.TS, Source: eventSource(ev), Text: strings.TrimSpace(ev.Event + " " + detailOf(ev)), Event: &ev})
	}
	return append(out, service[i:]...)
}

// eventSource is the session an event is of.
func eventSource(ev loop.Event) string {
	if v, ok := ev.Field("standing").(string); ok && v != "" {
		return v
	}
	if v, ok := ev.Field("work_item").(string); ok && v != "" {
		return v
	}
	return ev.Source
}

// serviceTail reads service.log: its last lines, then what is appended (a
// rotated file is read again from its start).
type serviceTail struct {
	path   string
	name   string // keep only the lines naming this session ("": all)
	offset int64
	at     time.Time // the last line's time: a line without one (a crash's output) takes it
}

// last returns the file's last n lines that are shown (none for n 0) and
// positions the tail at its end.
func (t *serviceTail) last(n int) []logLine {
	data, start := t.read(-logTailBytes)
	if start > 0 { // the first line read is likely cut
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	lines := t.parse(data)
	if n <= 0 {
		return nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// more returns the lines appended since the last read.
func (t *serviceTail) more() []logLine {
	data, _ := t.read(t.offset)
	return t.parse(data)
}

// read reads the complete lines from offset from (negative: that many
// bytes before the end) to the end, moving the tail past them; it starts
// over when the file shrank (rotated).
func (t *serviceTail) read(from int64) ([]byte, int64) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0
	}
	size := fi.Size()
	switch {
	case from < 0:
		from = max(0, size+from)
	case from > size: // rotated: a new file under the name
		from = 0
	}
	data := make([]byte, size-from)
	n, _ := f.ReadAt(data, from)
	data = data[:n]
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		t.offset = from
		return nil, from
	}
	t.offset = from + int64(end) + 1
	return data[:end+1], from
}

// parse turns service-log lines into logLines: their own time (text or
// JSON lines), without the lines that mirror an event (the event itself
// is shown) and, with a name, only the lines that name that session.
func (t *serviceTail) parse(data []byte) []logLine {
	var out []logLine
	for _, raw := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		at, text, mirror := parseServiceLine(raw)
		if at.IsZero() {
			at = t.at
		} else {
			t.at = at
		}
		if mirror || (t.name != "" && !namesSession(raw, t.name)) {
			continue
		}
		out = append(out, logLine{Time: at, Source: "service", Text: text})
	}
	return out
}

// parseServiceLine reads one service-log line: its time (zero when it has
// none), the text to show (the line without its time) and whether it
// mirrors a lifecycle event (servicelog.EventMessage).
func parseServiceLine(line string) (time.Time, string, bool) {
	if strings.HasPrefix(line, "{") {
		var v struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &v) == nil {
			return v.Time, line, v.Msg == servicelog.EventMessage
		}
		return time.Time{}, line, false
	}
	rest, ok := strings.CutPrefix(line, "time=")
	if !ok {
		return time.Time{}, line, false
	}
	stamp, text, _ := strings.Cut(rest, " ")
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return time.Time{}, line, false
	}
	return at, text, strings.Contains(text, fmt.Sprintf("msg=%q", servicelog.EventMessage))
}

// namesSession reports whether a service-log line names session name (a
// standing session's attribute, text or JSON).
func namesSession(line, name string) bool {
	return strings.Contains(line, "standing="+name+" ") || strings.HasSuffix(line, "standing="+name) ||
		strings.Contains(line, `"standing":"`+name+`"`) || strings.Contains(line, "work_item="+name)
}
