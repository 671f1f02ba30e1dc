package loop

import (
	"bytes"
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
