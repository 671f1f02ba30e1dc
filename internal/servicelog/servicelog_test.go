package servicelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

func TestNew_JSONGivesJSONLines(t *testing.T) {
	var buf bytes.Buffer
	log, closer := New(config.Log{Format: "json", Level: "info"}, "", &buf)
	defer closer.Close()
	log.Info("the-loop service listening", "url", "http://127.0.0.1:4114", "pid", 42)
	log.Warn("second")
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", n+1, err, sc.Text())
		}
		if line["msg"] == nil || line["level"] == nil || line["time"] == nil {
			t.Errorf("line %d lacks time, level or msg: %s", n+1, sc.Text())
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d lines, want 2:\n%s", n, buf.String())
	}
}

func TestNew_TextIsKeyValue(t *testing.T) {
	var buf bytes.Buffer
	log, _ := New(config.Log{Format: "text", Level: "info"}, "", &buf)
	log.Info("hello", "k", "v")
	if s := buf.String(); !strings.Contains(s, "level=INFO msg=hello k=v") || strings.HasPrefix(s, "{") {
		t.Errorf("text line %q", s)
	}
}

func TestNew_LevelFilters(t *testing.T) {
	for _, tt := range []struct {
		level string
		want  []string
		not   []string
	}{
		{"debug", []string{"d-line", "i-line", "w-line", "e-line"}, nil},
		{"info", []string{"i-line", "w-line", "e-line"}, []string{"d-line"}},
		{"warn", []string{"w-line", "e-line"}, []string{"d-line", "i-line"}},
		{"error", []string{"e-line"}, []string{"d-line", "i-line", "w-line"}},
	} {
		var buf bytes.Buffer
		log, _ := New(config.Log{Format: "text", Level: tt.level}, "", &buf)
		log.Debug("d-line")
		log.Info("i-line")
		log.Warn("w-line")
		log.Error("e-line")
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("level %s: %s missing:\n%s", tt.level, w, buf.String())
			}
		}
		for _, n := range tt.not {
			if strings.Contains(buf.String(), n) {
				t.Errorf("level %s: %s written:\n%s", tt.level, n, buf.String())
			}
		}
	}
}

// backups lists the rotated files beside service.log.
func backups(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "service-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNew_RotatesAtSizeKeepingMaxFiles writes 3.5 MB at maxSizeMB 1: the
// log is rotated at the size, and only maxFiles rotated files stay.
func TestNew_RotatesAtSizeKeepingMaxFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "service.log")
	log, closer := New(config.Log{Format: "json", Level: "info", MaxSizeMB: 1, MaxFiles: 2}, path, nil)
	pad := strings.Repeat("x", 1000)
	for range 3500 {
		log.Info("filler", "pad", pad)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<20 {
		t.Errorf("service.log is %d bytes, over the 1 MB it rotates at", fi.Size())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("service.log mode %v: group or others may read it", fi.Mode().Perm())
	}
	// lumberjack removes the surplus backups in the background: poll.
	deadline := time.Now().Add(10 * time.Second)
	for len(backups(t, dir)) != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if b := backups(t, dir); len(b) != 2 {
		t.Errorf("%d rotated files, want maxFiles 2: %v", len(b), b)
	}
}

// TestRotateIfFull rotates a full log before a start and leaves a small one.
func TestRotateIfFull(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "service.log")
	c := config.Log{MaxSizeMB: 1, MaxFiles: 3}
	if err := os.WriteFile(path, []byte("small\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RotateIfFull(c, path); err != nil || len(backups(t, dir)) != 0 {
		t.Fatalf("a small log was rotated (err %v, backups %v)", err, backups(t, dir))
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte("y"), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RotateIfFull(c, path); err != nil {
		t.Fatal(err)
	}
	if b := backups(t, dir); len(b) != 1 {
		t.Errorf("backups %v after rotating a full log, want 1", b)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("service.log after the rotation: %v, %v; want a fresh empty file", fi, err)
	}
	if err := RotateIfFull(c, filepath.Join(dir, "absent.log")); err != nil {
		t.Errorf("an absent log: %v", err)
	}
}

// TestEvents_LogsExitsRestartsAndSpawnFailures: the committed lifecycle
// events worth a line get one, at their level, with their fields; a
// turn's events and the service's own do not.
func TestEvents_LogsExitsRestartsAndSpawnFailures(t *testing.T) {
	var buf bytes.Buffer
	log, _ := New(config.Log{Format: "text", Level: "debug"}, "", &buf)
	ev := func(name, level string, fields ...loop.Field) loop.Event {
		return loop.Event{TS: time.Now(), Source: "service", Event: name, Level: level, Fields: fields}
	}
	Events(log)([]loop.Event{
		ev("standing.exited", loop.LevelWarning, loop.F("standing", "ops"), loop.F("exit_code", 1), loop.F("signal", "")),
		ev("standing.turn_started", loop.LevelInfo, loop.F("standing", "ops")),
		ev("standing.restarting", loop.LevelInfo, loop.F("standing", "ops"), loop.F("attempt", 2)),
		ev("session.spawn_failed", loop.LevelError, loop.F("work_item", "github:o/r#1"), loop.F("error", "no claude")),
		ev("api.request", loop.LevelDebug),
	})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=WARN msg="session event" event=standing.exited standing=ops exit_code=1`,
		`level=INFO msg="session event" event=standing.restarting standing=ops attempt=2`,
		`level=ERROR msg="session event" event=session.spawn_failed work_item=github:o/r#1 error="no claude"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d: %q, want it to end %q", i+1, lines[i], w)
		}
	}
}
