package store

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	loop "github.com/the-loop-dev/the-loop"
)

// The event log's bounds. Every event passes through AppendEvent, which
// cuts each of its fields to MaxEventField bytes and prunes the oldest
// events while the log holds more than Options.MaxEvents events or more
// than Options.MaxBytes bytes. The byte total is kept in meta with the
// bucket sequence it was counted at: a total another build left behind
// (it advanced the sequence without counting) is counted again, once.

// MaxEventField is the most bytes one event field keeps: a longer value is
// cut at a UTF-8 boundary and ends "… [truncated N bytes]", N the bytes
// cut.
const MaxEventField = 64 << 10

// truncRoom is what a cut value keeps free for its suffix: "… [truncated
// ", at most 20 digits, " bytes]".
const truncRoom = 48

// capFields cuts ev's fields to MaxEventField bytes. A string is cut as
// is; any other value longer than that once encoded becomes its encoding,
// cut. The fields are copied before the first change: the caller's slice
// is left alone.
func capFields(ev *loop.Event) {
	copied := false
	for i, f := range ev.Fields {
		v, ok := capValue(f.Value)
		if !ok {
			continue
		}
		if !copied {
			ev.Fields = append([]loop.Field(nil), ev.Fields...)
			copied = true
		}
		ev.Fields[i].Value = v
	}
}

// capValue is v cut to MaxEventField bytes; ok is false when v fits.
func capValue(v any) (any, bool) {
	switch s := v.(type) {
	case nil, bool, int, int64, uint64, float64, json.Number:
		return nil, false
	case string:
		if len(s) <= MaxEventField {
			return nil, false
		}
		return truncate(s), true
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) <= MaxEventField {
		return nil, false // an unencodable value is written as fmt.Sprint's, which MarshalJSON does
	}
	return truncate(string(b)), true
}

// truncate cuts s (longer than MaxEventField) at a UTF-8 boundary so that
// it and its suffix fit in MaxEventField bytes.
func truncate(s string) string {
	keep := MaxEventField - truncRoom
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + "… [truncated " + strconv.Itoa(len(s)-keep) + " bytes]"
}

// eventBytes is the events bucket's byte total (keys and values) before
// this append: the one meta keeps when it was counted at the bucket's
// current sequence, else counted now.
func eventBytes(meta, events *bolt.Bucket) uint64 {
	if v := meta.Get(keyEventBytes); len(v) == 16 && binary.BigEndian.Uint64(v[8:]) == events.Sequence() {
		return binary.BigEndian.Uint64(v)
	}
	var total uint64
	c := events.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		total += uint64(len(k) + len(v))
	}
	return total
}

// putEventBytes keeps the byte total, counted at the bucket's sequence.
func putEventBytes(meta, events *bolt.Bucket, total uint64) error {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, total)
	binary.BigEndian.PutUint64(v[8:], events.Sequence())
	return meta.Put(keyEventBytes, v)
}

// prune deletes the oldest events while more than maxEvents (n counts
// them) or more than maxBytes (total) remain, never the one just appended
// (newest). It returns the count and total that remain.
func prune(events *bolt.Bucket, newest uint64, n, total uint64, maxEvents int, maxBytes int64) (uint64, uint64, error) {
	c := events.Cursor()
	for n > uint64(maxEvents) || total > uint64(maxBytes) {
		// First after each delete: a bbolt cursor may skip a key when
		// stepped with Next right after Delete.
		k, v := c.First()
		if k == nil {
			return 0, 0, nil
		}
		if len(k) == 8 && binary.BigEndian.Uint64(k) >= newest {
			break // only the new event is left: it stays, whatever its size
		}
		size := uint64(len(k) + len(v))
		if err := c.Delete(); err != nil {
			return n, total, loop.Internal("store: pruning the event log: %w", err)
		}
		n--
		total -= min(total, size)
	}
	return n, total, nil
}
