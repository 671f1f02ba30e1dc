package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	loop "github.com/the-loop-dev/the-loop"
)

func TestCodex_Argv(t *testing.T) {
	c := NewCodex(CodexOptions{})
	id := "01a23137-6aa2-7403-81f6-959f1fab0e62"
	tests := []struct {
		name   string
		resume bool
		args   []string
		prompt string
		want   []string
	}{
		{"fresh bare", false, nil, "", []string{"--no-daemon"}},
		{"fresh prompt", false, nil, "hello", []string{"--no-daemon", "--", "hello"}},
		{"fresh multi-valued option keeps the prompt apart", false, []string{"--image", "a.png", "b.png"}, multiLinePrompt,
			[]string{"--no-daemon", "--image", "a.png", "b.png", "--", multiLinePrompt}},
		{"fresh prompt starting with a dash", false, nil, "-v is not a flag", []string{"--no-daemon", "--", "-v is not a flag"}},
		{"fresh operator's --no-daemon not doubled", false, []string{"--no-daemon", "-m", "o3"}, "p", []string{"--no-daemon", "-m", "o3", "--", "p"}},
		{"resume bare", true, nil, "", []string{"resume", "--no-daemon", "--", id}},
		{"resume prompt", true, []string{"-i", "x.png"}, "--back", []string{"resume", "--no-daemon", "-i", "x.png", "--", id, "--back"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := c.FreshArgv
			if tt.resume {
				build = c.ResumeArgv
			}
			got, err := build(id, tt.args, tt.prompt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("argv = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := c.ResumeArgv("", nil, "p"); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("resume without an id: %v, want EINVALID", err)
	}
	if c.Name() != "codex" || c.Binary() != "codex" || !c.CapturesSessionID() {
		t.Fatal("codex names or id assignment wrong")
	}
}

func readScreen(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The screens are capture-pane output of the real CLIs (docs/harnesses.md).
func TestCodex_ReadyOnRealScreens(t *testing.T) {
	c := NewCodex(CodexOptions{})
	for _, tt := range []struct {
		screen string
		want   bool
	}{
		{"codex/screens/ready-after-turn.txt", true},
		{"codex/screens/folder-trust.txt", false},
		{"codex/screens/hooks-review.txt", false},
	} {
		s := loop.PaneSnapshot{Screen: readScreen(t, tt.screen)}
		if got := c.Ready(s); got != tt.want {
			t.Errorf("Ready(%s) = %v, want %v", tt.screen, got, tt.want)
		}
	}
	// Dialog words in the conversation, far above the composer, are not a
	// dialog; the composer with a dialog's words below it is.
	talk := "› do you trust the files in this folder?\n• yes" + strings.Repeat("\nline", 30) + "\n› Ask Codex to do anything\n  footer"
	if !c.Ready(loop.PaneSnapshot{Screen: talk}) {
		t.Error("words of a dialog in the conversation made the pane not ready")
	}
	if c.Ready(loop.PaneSnapshot{Screen: "› Ask Codex to do anything\n  Hooks need review\n  enter confirm"}) {
		t.Error("a dialog under the composer was ready")
	}
	ready := loop.PaneSnapshot{Screen: readScreen(t, "codex/screens/ready-after-turn.txt")}
	for _, s := range []loop.PaneSnapshot{{Screen: ready.Screen, Canonical: true}, {Screen: ready.Screen, Dead: true}, {Screen: ""}} {
		if c.Ready(s) {
			t.Errorf("Ready(%+v) = true", s)
		}
	}
}

func readTOMLFile(t *testing.T, path string) map[string]any {
	t.Helper()
	doc := map[string]any{}
	if _, err := toml.DecodeFile(path, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

func codexTrustOf(doc map[string]any, key string) any {
	projects, _ := doc["projects"].(map[string]any)
	entry, _ := projects[key].(map[string]any)
	return entry["trust_level"]
}

func TestCodex_PrepareTrustsExactlyCwd(t *testing.T) {
	home := t.TempDir()
	cwd := filepath.Join(t.TempDir(), `odd "dir" \ name`)
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewCodex(CodexOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: home})
	cfg := filepath.Join(home, ".codex", "config.toml")
	if err := c.Prepare(cwd, nil); err != nil {
		t.Fatal(err)
	}
	doc := readTOMLFile(t, cfg)
	if codexTrustOf(doc, cwd) != "trusted" {
		t.Fatalf("config after Prepare: %v", doc)
	}
	if codexTrustOf(doc, filepath.Dir(cwd)) != nil {
		t.Fatal("an ancestor was trusted")
	}
	if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o600 {
		t.Fatalf("new config mode %v, want 0600", fi.Mode().Perm())
	}
	// A second Prepare changes nothing (not even the mtime): the file is
	// dated an hour back, so a rewrite would show whatever the clock's grain.
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(cfg, past, past); err != nil {
		t.Fatal(err)
	}
	if err := c.Prepare(cwd, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(cfg); !after.ModTime().Equal(past) {
		t.Fatal("an already trusted cwd rewrote the file")
	}
}

func TestCodex_PrepareKeepsTheOperatorsText(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, "config.toml")
	orig := "# my settings\nmodel = \"o3\" # the good one\n\n[projects.\"/srv/other\"]\ntrust_level = \"untrusted\"\n\n[tui]\nvim_mode_default = true"
	if err := os.WriteFile(cfg, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	c := NewCodex(CodexOptions{TrustEnabled: true, Env: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}})
	if err := c.Prepare(cwd, nil); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(cfg)
	if !strings.HasPrefix(string(data), orig+"\n") {
		t.Fatalf("the operator's text changed:\n%s", data)
	}
	doc := readTOMLFile(t, cfg)
	if codexTrustOf(doc, cwd) != "trusted" || codexTrustOf(doc, "/srv/other") != "untrusted" || doc["model"] != "o3" {
		t.Fatalf("config: %v", doc)
	}
	if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
}

func TestCodex_PrepareSymlinkedCwdTrustsBoth(t *testing.T) {
	home, real := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c := NewCodex(CodexOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: home})
	if err := c.Prepare(link, nil); err != nil {
		t.Fatal(err)
	}
	doc := readTOMLFile(t, filepath.Join(home, ".codex", "config.toml"))
	realPath, _ := filepath.EvalSymlinks(real)
	if codexTrustOf(doc, link) != "trusted" || codexTrustOf(doc, realPath) != "trusted" {
		t.Fatalf("config: %v", doc)
	}
}

func TestCodex_PrepareLeavesWhatItCannotEdit(t *testing.T) {
	cwd := t.TempDir()
	for name, content := range map[string]string{
		"not TOML":                   "model = \n[[[",
		"a table for cwd, untrusted": fmt.Sprintf("[projects.%s]\ntrust_level = \"untrusted\"\n", TOMLQuote(cwd)),
		"projects is not a table":    "projects = 3\n",
		"projects inline table":      "projects = { \"/x\" = { trust_level = \"trusted\" } }\n",
		"projects dotted keys":       "projects.\"/x\".trust_level = \"trusted\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			cfg := filepath.Join(home, "config.toml")
			if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			c := NewCodex(CodexOptions{TrustEnabled: true, Env: func(k string) string {
				if k == "CODEX_HOME" {
					return home
				}
				return ""
			}})
			err := c.Prepare(cwd, nil)
			if loop.ErrorCode(err) != loop.EINTERNAL || !strings.Contains(err.Error(), "left untouched") {
				t.Fatalf("err = %v, want EINTERNAL naming the file left untouched", err)
			}
			if data, _ := os.ReadFile(cfg); string(data) != content {
				t.Fatalf("the file changed:\n%s", data)
			}
		})
	}
}

func TestCodex_PrepareOffWritesNothing(t *testing.T) {
	home := t.TempDir()
	c := NewCodex(CodexOptions{Env: func(string) string { return "" }, Home: home})
	if err := c.Prepare(t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(home, ".codex")) {
		t.Fatal("Prepare with trust off wrote Codex's home")
	}
}

// rolloutName is a session file name for id.
func rolloutName(id string) string { return "rollout-2026-12-01T10-47-25-" + id + ".jsonl" }

// TestCodex_SessionIDOfRealProcess: a real child process of a "pane"
// process holds a session file open; another process outside the tree
// holds another — only the tree's counts.
func TestCodex_SessionIDOfRealProcess(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(day, 0o700); err != nil {
		t.Fatal(err)
	}
	mine, other := "01a23137-6aa2-7403-81f6-959f1fab0e62", "01a23137-0000-7000-8000-000000000001"
	for _, id := range []string{mine, other} {
		if err := os.WriteFile(filepath.Join(day, rolloutName(id)), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The pane runs a shell whose child (like Codex's native binary under
	// its node wrapper) holds the file; the newest file is the other one.
	pane := exec.Command("sh", "-c", `sh -c 'exec 3>>"$0"; sleep 30' "$0" & wait`, filepath.Join(day, rolloutName(mine)))
	stranger := exec.Command("sh", "-c", `exec 3>>"$0"; sleep 30`, filepath.Join(day, rolloutName(other)))
	for _, cmd := range []*exec.Cmd{pane, stranger} {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	_ = os.Chtimes(filepath.Join(day, rolloutName(other)), time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	c := NewCodex(CodexOptions{Env: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, ok, err := c.SessionIDOf(pane.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if id != mine {
				t.Fatalf("SessionIDOf = %s, want %s", id, mine)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pane's session file was never found")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Before Codex opened its file (a process holding nothing): not yet.
	idle := exec.Command("sleep", "30")
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idle.Process.Kill(); _ = idle.Wait() })
	if id, ok, err := c.SessionIDOf(idle.Process.Pid); ok || err != nil || id != "" {
		t.Fatalf("SessionIDOf(no file) = %q, %v, %v; want not yet", id, ok, err)
	}
}

// fakeProc builds a proc tree: pid → (ppid, files it holds open).
func fakeProc(t *testing.T, procs map[int]struct {
	ppid  int
	files []string
}) string {
	t.Helper()
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (node (x) y) S %d 1 1 0 -1\n", pid, p.ppid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, f := range p.files {
			if err := os.Symlink(f, filepath.Join(dir, "fd", strconv.Itoa(i+3))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestCodex_SessionIDOfAmbiguousAndForeign(t *testing.T) {
	home := "/codex-home"
	a, b := "01a23137-6aa2-7403-81f6-959f1fab0e62", "01a23137-0000-7000-8000-000000000001"
	env := func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}
	day := home + "/sessions/2026/12/01/"
	type proc = struct {
		ppid  int
		files []string
	}
	t.Run("two conversations in one tree", func(t *testing.T) {
		root := fakeProc(t, map[int]proc{
			100: {1, nil},
			101: {100, []string{day + rolloutName(a)}},
			102: {101, []string{day + rolloutName(b), "/dev/null"}},
		})
		_, ok, err := NewCodex(CodexOptions{Env: env, Proc: root}).SessionIDOf(100)
		if ok || err == nil || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
			t.Fatalf("ok=%v err=%v, want an error naming both", ok, err)
		}
	})
	t.Run("a file outside the sessions dir, and another tree's file", func(t *testing.T) {
		root := fakeProc(t, map[int]proc{
			100: {1, []string{"/elsewhere/sessions/" + rolloutName(a)}},
			200: {1, []string{day + rolloutName(b)}},
		})
		id, ok, err := NewCodex(CodexOptions{Env: env, Proc: root}).SessionIDOf(100)
		if ok || err != nil || id != "" {
			t.Fatalf("SessionIDOf = %q, %v, %v; want nothing", id, ok, err)
		}
	})
	t.Run("the same file twice is one conversation", func(t *testing.T) {
		root := fakeProc(t, map[int]proc{
			100: {1, []string{day + rolloutName(a)}},
			101: {100, []string{day + rolloutName(a), day + "rollout-bad-name.jsonl"}},
		})
		id, ok, err := NewCodex(CodexOptions{Env: env, Proc: root}).SessionIDOf(100)
		if !ok || err != nil || id != a {
			t.Fatalf("SessionIDOf = %q, %v, %v; want %s", id, ok, err, a)
		}
	})
}

func TestCodexSessionPath(t *testing.T) {
	home := t.TempDir()
	id := "01a23137-6aa2-7403-81f6-959f1fab0e62"
	if p, err := CodexSessionPath(home, id); p != "" || err != nil {
		t.Fatalf("before the file: %q, %v", p, err)
	}
	day := filepath.Join(home, "sessions", "2026", "12", "01")
	_ = os.MkdirAll(day, 0o700)
	want := filepath.Join(day, rolloutName(id))
	_ = os.WriteFile(want, nil, 0o600)
	_ = os.WriteFile(filepath.Join(day, rolloutName("01a23137-0000-7000-8000-000000000001")), nil, 0o600)
	if p, err := CodexSessionPath(home, id); p != want || err != nil {
		t.Fatalf("CodexSessionPath = %q, %v; want %s", p, err, want)
	}
	for _, bad := range []string{"", "*", "../x", "01a23137-6aa2-7403-81f6-959f1fab0e6?"} {
		if _, err := CodexSessionPath(home, bad); loop.ErrorCode(err) != loop.EINVALID {
			t.Fatalf("id %q: %v, want EINVALID", bad, err)
		}
	}
}

// TestReadCodexTranscript_Recording reads the session file the real Codex
// wrote (e2e TestRealCodex_FreshSayStopResume).
func TestReadCodexTranscript_Recording(t *testing.T) {
	path := filepath.Join("testdata", "codex", "session.jsonl")
	got, err := ReadCodexTranscript(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	boot := "-- you are the supervisor; say hello"
	want := []string{boot, "answer to: " + boot, "second message", "answer to: second message",
		"--back after the stop", "answer to: --back after the stop"}
	if len(got) != len(want) {
		t.Fatalf("entries = %+v, want %d", got, len(want))
	}
	for i, e := range got {
		role := loop.RoleUser
		if i%2 == 1 {
			role = loop.RoleAssistant
		}
		if e.Text != want[i] || e.Role != role || e.At.IsZero() {
			t.Fatalf("entry %d = %+v, want %s %q", i, e, role, want[i])
		}
		if role == loop.RoleAssistant && (e.Usage == nil || e.Usage.Input != 10 || e.Usage.Output == 0) {
			t.Fatalf("answer %d usage = %+v", i, e.Usage)
		}
	}
	last, err := ReadCodexTranscript(path, 3)
	if err != nil || len(last) != 3 || last[0].Text != "answer to: second message" {
		t.Fatalf("last 3 = %+v, %v", last, err)
	}
	if none, err := ReadCodexTranscript(path, 0); none != nil || err != nil {
		t.Fatal("n = 0 gave entries")
	}
}

func TestReadCodexTranscript_MissingAndHalfWritten(t *testing.T) {
	if got, err := ReadCodexTranscript(filepath.Join(t.TempDir(), "none.jsonl"), 5); got != nil || err != nil {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "codex", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "half.jsonl")
	half := string(data) + `{"timestamp":"2026-12-01T10:48:00Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"cut o`
	if err := os.WriteFile(path, []byte(half), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCodexTranscript(path, 1)
	if err != nil || len(got) != 1 || got[0].Text != "answer to: --back after the stop" {
		t.Fatalf("half-written last line: %+v, %v", got, err)
	}
}
