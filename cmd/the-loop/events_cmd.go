package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// EventsCmd is `the-loop events`.
type EventsCmd struct {
	Type     []string `help:"Event-name pattern (fnmatch, repeatable), e.g. 'standing.*'." placeholder:"PATTERN"`
	Standing string   `help:"Only events of this standing session." placeholder:"NAME"`
	WorkItem string   `name:"work-item" help:"Only events of this work item (standing:NAME finds a standing session's)." placeholder:"REF"`
	Level    string   `enum:",debug,info,warning,error" default:"" help:"Minimum level (debug, info, warning, error); the table shows info and above unless given, json and jsonl every level."`
	Since    string   `help:"Only events since an ISO-8601 time or an age (30s, 5m, 2h, 1d)." placeholder:"WHEN"`
	Limit    int      `default:"50" help:"The last N matching events (0 = all)."`
	Format   string   `enum:"table,json,jsonl" default:"table" help:"Output format (table, json, jsonl)."`
	Follow   bool     `short:"f" help:"Keep printing new events until interrupted."`

	layout tableLayout // the table's widths, kept for the rows --follow adds
}

// picking: the config is loaded tolerantly — a reader must not miss a
// store over a problem in the config.
func (c *EventsCmd) picking() picking { return picking{load: loadReading} }

// Run reads the event log: through the service when it answers (it holds
// the store), else from the store directly.
func (c *EventsCmd) Run(a *App, cfg *config.Config) error {
	if _, err := store.ParseSince(c.Since, time.Now()); err != nil {
		return loop.Invalid("--since '%s': %v (an ISO-8601 time, or an age like 30s, 5m, 2h, 1d)", c.Since, err)
	}
	if c.Standing != "" {
		if err := loop.CheckName(c.Standing); err != nil {
			return err
		}
	}
	if c.Limit < 0 {
		return loop.Invalid("--limit %d: expected 0 (all) or a positive count", c.Limit)
	}
	ctx, stop := signalContext()
	defer stop()
	read, done, err := a.eventReader(ctx, cfg)
	if err != nil {
		return err
	}
	defer done()
	level := c.Level
	if level == "" && c.Format == "table" {
		level = loop.LevelInfo // api.request and the like are debug: a table for people leaves them out
	}
	q := loop.EventQuery{Types: c.Type, Standing: c.Standing, WorkItem: c.WorkItem, Level: level, Since: c.Since, Limit: c.Limit}
	events, err := read(q)
	if err != nil {
		return err
	}
	if len(events) == 0 && !c.Follow {
		fmt.Fprintln(a.Stderr, "(no matching events)")
		return nil
	}
	if c.Follow {
		c.layout.widths = followWidths()
	}
	if err := c.print(a.Stdout, events, true); err != nil {
		return err
	}
	if !c.Follow {
		return nil
	}
	var after uint64
	if n := len(events); n > 0 {
		after = events[n-1].Seq
	} else if last, err := read(loop.EventQuery{Limit: 1}); err == nil && len(last) > 0 {
		after = last[0].Seq
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
		q.After, q.Limit = after, 0
		more, err := read(q)
		if err != nil {
			return err
		}
		if len(more) > 0 {
			after = more[len(more)-1].Seq
			if err := c.print(a.Stdout, more, false); err != nil {
				return err
			}
		}
	}
}

// followWidths are the least widths of the table --follow prints: the
// rows it adds later line up with the header as long as their cells fit
// (a timestamp, "channels", "warning", most event names and refs).
func followWidths() []int {
	return []int{len(loop.TimeFormat), len("channels"), len("warning"), 32, 24}
}

// eventReader answers event queries from this state root's service when it
// answers, else from the store (opened around each read).
func (a *App) eventReader(ctx context.Context, cfg *config.Config) (func(loop.EventQuery) ([]loop.Event, error), func(), error) {
	remote, err := a.viaService(cfg)
	if err != nil {
		return nil, nil, err
	}
	api, done, err := a.servicesFor(cfg, remote, picking{})
	if err != nil {
		return nil, nil, err
	}
	return func(q loop.EventQuery) ([]loop.Event, error) { return api.Events.Events(ctx, q) }, done, nil
}

func (c *EventsCmd) print(w io.Writer, events []loop.Event, header bool) error {
	switch c.Format {
	case "jsonl":
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
		}
		return nil
	case "json":
		if events == nil {
			events = []loop.Event{}
		}
		return writeJSON(w, events)
	}
	table := [][]string{}
	if header {
		table = append(table, []string{"Time", "Source", "Level", "Event", "Session", "Detail"})
	}
	for _, e := range events {
		table = append(table, []string{e.TS.UTC().Format(loop.TimeFormat), e.Source, e.Level, e.Event, sessionOf(e), detailOf(e)})
	}
	if len(table) > 0 {
		c.layout.write(w, table)
	}
	return nil
}

// sessionOf is the table's "Session" cell: the work item's ref, or the
// standing session's (standing:NAME).
func sessionOf(e loop.Event) string {
	if v, ok := e.Field("work_item").(string); ok && v != "" {
		return v
	}
	if v, ok := e.Field("standing").(string); ok && v != "" {
		return loop.StandingRef(v)
	}
	return ""
}

// detailOf renders the event's own fields as k=v.
func detailOf(e loop.Event) string {
	var parts []string
	for _, f := range e.Fields {
		if f.Key == "work_item" || f.Key == "standing" {
			continue
		}
		v := fmt.Sprint(f.Value)
		if _, ok := f.Value.(string); !ok {
			if b, err := json.Marshal(f.Value); err == nil {
				v = string(b)
			}
		}
		parts = append(parts, f.Key+"="+v)
	}
	return strings.Join(parts, " ")
}
