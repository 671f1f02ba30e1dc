// Package servicelog builds the service's own logger from service.log
// (format, level, size-based rotation). It is the only importer of
// gopkg.in/natefinch/lumberjack.v2.
package servicelog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/natefinch/lumberjack.v2"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// New returns the service's logger as c says: text or JSON lines at c.Level
// or above, written to path — rotated once it reaches c.MaxSizeMB, keeping
// c.MaxFiles rotated files — or to w when path is "". The closer closes the
// file (a no-op for w).
func New(c config.Log, path string, w io.Writer) (*slog.Logger, io.Closer) {
	var closer io.Closer = nopCloser{}
	if path != "" {
		lj := rotator(c, path)
		w, closer = lj, lj
	}
	opts := &slog.HandlerOptions{Level: Level(c.Level)}
	var h slog.Handler
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h), closer
}

// Level is service.log.level as a slog level (info for anything else;
// the schema has refused it).
func Level(name string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// RotateIfFull rotates the log at path when it has reached c.MaxSizeMB:
// what `the-loop start` does before it launches the service, whose output
// it appends to that file (so the lines a failed start quotes are its own).
func RotateIfFull(c config.Log, path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < megabytes(c.MaxSizeMB) {
		return nil
	}
	lj := rotator(c, path)
	defer lj.Close()
	return lj.Rotate()
}

// rotator is the lumberjack logger for path under c: backups named
// service-<UTC time>.log beside it, MaxFiles of them kept (0: all).
func rotator(c config.Log, path string) *lumberjack.Logger {
	return &lumberjack.Logger{Filename: path, MaxSize: max(1, c.MaxSizeMB), MaxBackups: max(0, c.MaxFiles)}
}

func megabytes(n int) int64 { return int64(max(1, n)) << 20 }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// EventMessage is the message of the service-log line that mirrors a
// session's lifecycle event (Events): `the-loop logs`, which shows the
// events themselves, leaves these lines out.
const EventMessage = "session event"

// logged are the lifecycle events, by what follows "standing." or
// "session.", that Events writes to the service log: every exit, restart
// and spawn failure, and the starts and stops around them.
var logged = map[string]bool{
	"started": true, "resumed": true, "recovered": true, "stopped": true, "closed": true,
	"exited": true, "not_restarted": true, "restarting": true, "restart_limited": true,
	"spawn_failed": true, "resume_failed": true, "stop_failed": true,
}

// Events returns an observer of the events the store commits
// (store.Options.Committed) that writes a line to log for each lifecycle
// event of a session worth one (logged): the event's name and level, and
// its own fields.
func Events(log *slog.Logger) func([]loop.Event) {
	return func(evs []loop.Event) {
		for _, ev := range evs {
			kind, what, _ := strings.Cut(ev.Event, ".")
			if (kind != "standing" && kind != "session") || !logged[what] {
				continue
			}
			attrs := make([]slog.Attr, 0, len(ev.Fields)+1)
			attrs = append(attrs, slog.String("event", ev.Event))
			for _, f := range ev.Fields {
				if f.Value != nil && f.Value != "" {
					attrs = append(attrs, slog.Any(f.Key, f.Value))
				}
			}
			log.LogAttrs(context.Background(), eventLevel(ev.Level), EventMessage, attrs...)
		}
	}
}

// eventLevel is an event's level as a slog level.
func eventLevel(level string) slog.Level {
	switch level {
	case loop.LevelError:
		return slog.LevelError
	case loop.LevelWarning:
		return slog.LevelWarn
	case loop.LevelDebug:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
