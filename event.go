package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event levels.
const (
	LevelDebug   = "debug"
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// LevelRank orders levels for minimum-level filters; unknown levels rank as info.
func LevelRank(level string) int {
	switch level {
	case LevelDebug:
		return 0
	case LevelWarning:
		return 2
	case LevelError:
		return 3
	default:
		return 1
	}
}

// TimeFormat is the envelope's timestamp: UTC, milliseconds, Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// RecordTimeFormat is a record's timestamp: UTC, second precision, Z.
const RecordTimeFormat = "2006-01-02T15:04:05Z"

// Field is one of an event's own fields; order is kept as emitted.
type Field struct {
	Key   string
	Value any
}

// F builds a Field.
func F(key string, value any) Field { return Field{Key: key, Value: value} }

// Event is one entry of the event log. It marshals as the original's
// envelope: ts, source, event, level, pid, then its own fields in order
// (fields whose value is nil or "" are omitted, as the original omits None).
type Event struct {
	Seq    uint64 // position in the log; not part of the envelope
	TS     time.Time
	Source string
	Event  string
	Level  string
	PID    int
	Fields []Field
}

// Field returns the value of the named field, or nil.
func (e *Event) Field(key string) any {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// MarshalJSON writes the envelope in the original's key order.
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(v)
		if err != nil {
			vb, _ = json.Marshal(fmt.Sprint(v))
		}
		b.Write(vb)
		return nil
	}
	_ = write("ts", e.TS.UTC().Format(TimeFormat))
	_ = write("source", e.Source)
	_ = write("event", e.Event)
	_ = write("level", e.Level)
	_ = write("pid", e.PID)
	for _, f := range e.Fields {
		switch f.Key {
		case "ts", "source", "event", "level", "pid":
			continue
		}
		if f.Value == nil || f.Value == "" {
			continue
		}
		_ = write(f.Key, f.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an envelope back, keeping the order of its fields.
func (e *Event) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("event: expected an object")
	}
	*e = Event{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		switch key {
		case "ts":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			t, err := time.Parse(TimeFormat, s)
			if err != nil {
				t, err = time.Parse(time.RFC3339Nano, s)
				if err != nil {
					return fmt.Errorf("event: ts %q: %w", s, err)
				}
			}
			e.TS = t.UTC()
		case "source":
			_ = json.Unmarshal(raw, &e.Source)
		case "event":
			_ = json.Unmarshal(raw, &e.Event)
		case "level":
			_ = json.Unmarshal(raw, &e.Level)
		case "pid":
			_ = json.Unmarshal(raw, &e.PID)
		default:
			var v any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				return err
			}
			e.Fields = append(e.Fields, Field{Key: key, Value: v})
		}
	}
	return nil
}

// EventQuery selects events from the log (the filters of `the-loop
// events` and GET /api/v1/events). Its zero value selects every event.
type EventQuery struct {
	// Types are event-name patterns (path.Match syntax, "standing.*");
	// an event matching any of them is selected.
	Types []string `json:"type,omitempty"`
	// Standing selects events of one standing session (field standing).
	Standing string `json:"standing,omitempty"`
	// WorkItem selects events of one work item; "standing:<name>" also
	// selects that standing session's events (decisions D19).
	WorkItem string `json:"workItem,omitempty"`
	// Level is a minimum level: debug, info, warning or error.
	Level string `json:"level,omitempty"`
	// Since is an ISO-8601 time or an age (30s, 15m, 2h, 7d).
	Since string `json:"since,omitempty"`
	// Limit keeps the last Limit matching events; 0 means all. With After
	// above zero, or Forward, it keeps the first Limit after After: a page.
	Limit int `json:"limit,omitempty"`
	// After selects events whose sequence number is above it: to follow
	// the log, ask again with After set to the last Seq seen.
	After uint64 `json:"after,omitempty"`
	// Forward pages from After even when it is zero (the log's start):
	// Limit keeps the oldest events after After rather than the newest.
	Forward bool `json:"forward,omitempty"`
}

// EventLog reads the event log.
type EventLog interface {
	// Events returns the events q selects, oldest first, each with its
	// Seq. EINVALID for a bad level, pattern or since.
	Events(ctx context.Context, q EventQuery) ([]Event, error)
}

// EventWriter appends events that accompany no state change (api.request,
// a Slack rate limit, a mirrored reply).
type EventWriter interface {
	// NewEvent builds an envelope stamped with the writer's clock, source
	// and pid.
	NewEvent(name, level string, fields ...Field) Event
	// Emit appends evs in one transaction. Only EINTERNAL.
	Emit(evs ...Event) error
}
