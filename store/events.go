package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// AppendEvent appends ev to the log in this transaction (decisions D5): it
// normalises an unknown level to info, cuts each field to MaxEventField
// bytes (ev's fields are replaced, the caller's slice is not written),
// assigns ev.Seq, stores the original's envelope and prunes the oldest
// events so at most MaxEvents and MaxBytes remain. ev.Seq is meaningful
// once the transaction commits.
func (t *Tx) AppendEvent(ev *loop.Event) error {
	if ev == nil {
		return loop.Internal("store: no event to append")
	}
	if ev.TS.IsZero() {
		return loop.Internal("store: event %s has no timestamp", ev.Event)
	}
	switch ev.Level {
	case loop.LevelDebug, loop.LevelInfo, loop.LevelWarning, loop.LevelError:
	default:
		ev.Level = loop.LevelInfo
	}
	b := t.tx.Bucket(bucketEvents)
	meta := t.tx.Bucket(bucketMeta)
	total := eventBytes(meta, b) // before NextSequence: it is counted at the current one
	seq, err := b.NextSequence()
	if err != nil {
		return loop.Internal("store: appending event %s: %w", ev.Event, err)
	}
	ev.Seq = seq
	v, err := json.Marshal(ev)
	if err == nil && len(v) > MaxEventField {
		// Only an envelope past the cap can hold a field past it.
		capFields(ev)
		v, err = json.Marshal(ev)
	}
	if err != nil {
		return loop.Internal("store: encoding event %s: %w", ev.Event, err)
	}
	key := u64(seq)
	if err := b.Put(key, v); err != nil {
		return loop.Internal("store: appending event %s: %w", ev.Event, err)
	}
	n, total, err := prune(b, seq, getUint(meta, keyEventCount)+1, total+uint64(len(key)+len(v)), t.maxEvents, t.maxBytes)
	if err != nil {
		return err
	}
	if err := putUint(meta, keyEventCount, n); err != nil {
		return loop.Internal("store: counting events: %w", err)
	}
	if err := putEventBytes(meta, b, total); err != nil {
		return loop.Internal("store: counting the event log's bytes: %w", err)
	}
	if t.db != nil && t.db.opt.Committed != nil {
		t.appended = append(t.appended, *ev)
	}
	return nil
}

// EventQuery selects events from the log; its zero value selects them all.
// Every set criterion must hold.
type EventQuery struct {
	// Types are event-name patterns (path.Match syntax, e.g. "standing.*");
	// an event matching any of them is selected.
	Types []string
	// Standing selects events whose field standing is this name.
	Standing string
	// WorkItem selects events whose field work_item is this ref; a standing
	// ref ("standing:<name>") also selects events whose field standing is
	// the name (decisions D19).
	WorkItem string
	// MinLevel selects events at this level or above (loop.LevelRank).
	MinLevel string
	// Since selects events stamped at or after it.
	Since time.Time
	// After selects events with a sequence strictly greater.
	After uint64
	// Limit keeps the last Limit matching events (0 = all); with After
	// above zero or Forward, the first Limit after After (a page). Results
	// are always oldest first.
	Limit int
	// Forward pages from After (zero: the log's start) instead of keeping
	// the newest: the next page starts after the last Seq of this one.
	Forward bool
}

// matcher is a validated EventQuery.
type matcher struct {
	q        EventQuery
	minRank  int
	workItem string
	// needles: in each group, at least one must occur in the raw envelope.
	needles [][][]byte
}

func (q EventQuery) compile() (*matcher, error) {
	m := &matcher{q: q}
	for _, p := range q.Types {
		if _, err := path.Match(p, ""); err != nil {
			return nil, loop.Invalid("invalid event type pattern '%s': %v", p, err)
		}
	}
	switch q.MinLevel {
	case "", loop.LevelDebug, loop.LevelInfo, loop.LevelWarning, loop.LevelError:
		m.minRank = loop.LevelRank(q.MinLevel)
		if q.MinLevel == "" {
			m.minRank = loop.LevelRank(loop.LevelDebug)
		}
	default:
		return nil, loop.Invalid("invalid level '%s' (expected debug, info, warning or error)", q.MinLevel)
	}
	if q.Limit < 0 {
		return nil, loop.Invalid("invalid limit %d (expected 0 for all, or a positive number)", q.Limit)
	}
	if q.Standing != "" {
		m.needles = append(m.needles, [][]byte{jsonString(q.Standing)})
	}
	if ref := strings.TrimSpace(q.WorkItem); ref != "" {
		m.workItem = ref
		group := [][]byte{jsonString(ref)}
		if name, ok := loop.ParseStandingRef(ref); ok {
			group = append(group, jsonString(name))
		}
		m.needles = append(m.needles, group)
	}
	return m, nil
}

// jsonString is s as the envelope encodes it, for a cheap pre-check on the
// raw bytes before decoding.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// prefilter reports whether raw may match: a value a set criterion wants
// must occur somewhere in it (match decides the rest).
func (m *matcher) prefilter(raw []byte) bool {
	for _, group := range m.needles {
		if !slices.ContainsFunc(group, func(n []byte) bool { return bytes.Contains(raw, n) }) {
			return false
		}
	}
	return true
}

func (m *matcher) match(ev *loop.Event) bool {
	q := &m.q
	if len(q.Types) > 0 {
		hit := false
		for _, p := range q.Types {
			if ok, _ := path.Match(p, ev.Event); ok {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	if loop.LevelRank(ev.Level) < m.minRank {
		return false
	}
	if !q.Since.IsZero() && ev.TS.Before(q.Since) {
		return false
	}
	if q.Standing != "" && fieldString(ev, "standing") != q.Standing {
		return false
	}
	if m.workItem != "" && fieldString(ev, "work_item") != m.workItem {
		name, ok := loop.ParseStandingRef(m.workItem)
		if !ok || fieldString(ev, "standing") != name {
			return false
		}
	}
	return true
}

func fieldString(ev *loop.Event, key string) string {
	s, _ := ev.Field(key).(string)
	return s
}

// Events returns the events q selects, oldest first, each with its Seq. An
// envelope that no longer decodes is skipped, as the original's reader
// skips a corrupt line.
func (t *Tx) Events(q EventQuery) ([]loop.Event, error) {
	m, err := q.compile()
	if err != nil {
		return nil, err
	}
	c := t.tx.Bucket(bucketEvents).Cursor()
	var out []loop.Event
	try := func(k, v []byte) {
		if len(k) != 8 || !m.prefilter(v) {
			return
		}
		var ev loop.Event
		if json.Unmarshal(v, &ev) != nil { // decoding copies: nothing aliases the map
			return
		}
		ev.Seq = binary.BigEndian.Uint64(k)
		if m.match(&ev) {
			out = append(out, ev)
		}
	}
	if q.Limit > 0 && !q.Forward && q.After == 0 {
		for k, v := c.Last(); k != nil && len(out) < q.Limit; k, v = c.Prev() {
			try(k, v)
		}
		slices.Reverse(out)
		return out, nil
	}
	if q.After == math.MaxUint64 {
		return nil, nil
	}
	for k, v := c.Seek(u64(q.After + 1)); k != nil && (q.Limit == 0 || len(out) < q.Limit); k, v = c.Next() {
		try(k, v)
	}
	return out, nil
}

var relativeSinceRE = regexp.MustCompile(`^(\d+)([smhd])$`)

// ParseSince reads an events "since" value: an ISO-8601 timestamp (with or
// without a zone, seconds fraction or time of day; no zone means UTC) or a
// relative age Ns, Nm, Nh or Nd before now. Empty means no bound (zero).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if m := relativeSinceRE.FindStringSubmatch(s); m != nil {
		unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || n > int64(math.MaxInt64/unit) {
			return time.Time{}, loop.Invalid("invalid since '%s': too far back", s)
		}
		return now.Add(-time.Duration(n) * unit).UTC(), nil
	}
	// Parsing accepts a seconds fraction even where a layout has none.
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, loop.Invalid("invalid since '%s' (expected an ISO-8601 time such as 2026-07-22T06:31:20Z, "+
		"or an age such as 30s, 15m, 2h, 7d)", s)
}
