package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestGemini_Argv(t *testing.T) {
	g := NewGemini(GeminiOptions{})
	id := "4d13a655-fab3-471c-ba6c-367258f4b072"
	tests := []struct {
		name   string
		resume bool
		args   []string
		prompt string
		want   []string
	}{
		{"fresh bare", false, nil, "", []string{"--session-id", id}},
		{"fresh prompt", false, nil, "hello", []string{"--session-id", id, "--prompt-interactive=hello"}},
		{"fresh prompt starting with dashes stays one value", false, nil, "-- you are", []string{"--session-id", id, "--prompt-interactive=-- you are"}},
		{"array option keeps the prompt apart", false, []string{"--include-directories", "a", "b"}, multiLinePrompt,
			[]string{"--session-id", id, "--include-directories", "a", "b", "--prompt-interactive=" + multiLinePrompt}},
		{"resume bare", true, []string{"-m", "gemini-2.5-pro"}, "", []string{"--resume", id, "-m", "gemini-2.5-pro"}},
		{"resume prompt", true, nil, "--back", []string{"--resume", id, "--prompt-interactive=--back"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := g.FreshArgv
			if tt.resume {
				build = g.ResumeArgv
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
	for _, build := range []func(string, []string, string) ([]string, error){g.FreshArgv, g.ResumeArgv} {
		if _, err := build("", nil, "p"); loop.ErrorCode(err) != loop.EINVALID {
			t.Fatalf("no id: %v, want EINVALID", err)
		}
	}
	if g.Name() != "gemini" || g.Binary() != "gemini" || g.CapturesSessionID() || g.SubmitDelay() < 200e6 {
		t.Fatal("gemini names, id assignment or submit delay wrong")
	}
}

func TestGemini_ReadyOnRealScreens(t *testing.T) {
	g := NewGemini(GeminiOptions{})
	for _, tt := range []struct {
		screen string
		want   bool
	}{
		{"gemini/screens/ready-after-turn.txt", true},
		{"gemini/screens/folder-trust.txt", false},
		{"gemini/screens/auth.txt", false},
	} {
		if got := g.Ready(loop.PaneSnapshot{Screen: readScreen(t, tt.screen)}); got != tt.want {
			t.Errorf("Ready(%s) = %v, want %v", tt.screen, got, tt.want)
		}
	}
	// Constructed, not captured: no tool ran offline (docs/harnesses.md).
	confirm := " > run the tests\n╭──╮\n│ ? Shell npm test │\n│ Allow execution of: 'npm'? │\n│ ● 1. Allow once │\n│   2. Allow for this session │\n╰──╯"
	if g.Ready(loop.PaneSnapshot{Screen: confirm}) {
		t.Error("a tool confirmation, with the prompt's echo above it, was ready")
	}
	ready := readScreen(t, "gemini/screens/ready-after-turn.txt")
	if g.Ready(loop.PaneSnapshot{Screen: ready, Canonical: true}) || g.Ready(loop.PaneSnapshot{Screen: ready, Dead: true}) {
		t.Error("a cooked or dead pane is ready")
	}
}

func TestGemini_PrepareTrustsExactlyCwd(t *testing.T) {
	home, real := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".gemini", "trustedFolders.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"/srv/other": "DO_NOT_TRUST"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := NewGemini(GeminiOptions{TrustEnabled: true, Env: func(string) string { return "" }, Home: home})
	if err := g.Prepare(link, nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]string
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	realPath, _ := filepath.EvalSymlinks(real)
	want := map[string]string{"/srv/other": "DO_NOT_TRUST", link: "TRUST_FOLDER", realPath: "TRUST_FOLDER"}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("trustedFolders = %v, want %v", doc, want)
	}
}

func TestGemini_PrepareHonoursGeminiCLIHomeAndLeavesBadFiles(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "GEMINI_CLI_HOME" {
			return home
		}
		return ""
	}
	file := filepath.Join(home, ".gemini", "trustedFolders.json")
	_ = os.MkdirAll(filepath.Dir(file), 0o700)
	_ = os.WriteFile(file, []byte(`{"/x": `), 0o600)
	err := NewGemini(GeminiOptions{TrustEnabled: true, Env: env, Home: "/nonexistent"}).Prepare(t.TempDir(), nil)
	if loop.ErrorCode(err) != loop.EINTERNAL || !strings.Contains(err.Error(), "left untouched") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != `{"/x": ` {
		t.Fatal("a file that does not parse was replaced")
	}
	off := t.TempDir()
	if err := NewGemini(GeminiOptions{Home: off, Env: func(string) string { return "" }}).Prepare(t.TempDir(), nil); err != nil || exists(filepath.Join(off, ".gemini")) {
		t.Fatalf("trust off: %v", err)
	}
}

// geminiProject lays out a Gemini CLI project dir for cwd under slug.
func geminiProject(t *testing.T, dir, cwd, slug string) string {
	t.Helper()
	chats := filepath.Join(dir, "tmp", slug, "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	reg, _ := json.Marshal(map[string]any{"projects": map[string]string{cwd: slug}})
	if err := os.WriteFile(filepath.Join(dir, "projects.json"), reg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", slug, ".project_root"), []byte(cwd), 0o600); err != nil {
		t.Fatal(err)
	}
	return chats
}

func TestGeminiSessionPath(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	id := "4d13a655-fab3-471c-ba6c-367258f4b072"
	if p, err := GeminiSessionPath(dir, cwd, id); p != "" || err != nil {
		t.Fatalf("nothing registered: %q, %v", p, err)
	}
	chats := geminiProject(t, dir, cwd, "work")
	// Another conversation whose id shares the first 8 characters, newer.
	other := filepath.Join(chats, "session-2026-12-01T11-00-4d13a655.jsonl")
	_ = os.WriteFile(other, []byte(`{"sessionId":"4d13a655-0000-4000-8000-000000000000","projectHash":"x"}`+"\n"), 0o600)
	want := filepath.Join(chats, "session-2026-12-01T10-52-4d13a655.jsonl")
	_ = os.WriteFile(want, []byte(`{"sessionId":"`+id+`","projectHash":"x"}`+"\n"), 0o600)
	if p, err := GeminiSessionPath(dir, cwd, id); p != want || err != nil {
		t.Fatalf("GeminiSessionPath = %q, %v; want %s", p, err, want)
	}
	// A slug whose marker names another project is not this cwd's.
	_ = os.WriteFile(filepath.Join(dir, "tmp", "work", ".project_root"), []byte("/somewhere/else"), 0o600)
	if p, _ := GeminiSessionPath(dir, cwd, id); p != "" {
		t.Fatalf("a slug owned by another project was used: %s", p)
	}
	if _, err := GeminiSessionPath(dir, cwd, "../../etc"); loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("bad id: %v", err)
	}
}

// TestReadGeminiTranscript_Recording reads the session file the real Gemini
// CLI wrote (e2e TestRealGemini_FreshSayStopResume): a fresh start, a say,
// then a resume, which writes a snapshot of the conversation.
func TestReadGeminiTranscript_Recording(t *testing.T) {
	path := filepath.Join("testdata", "gemini", "session.jsonl")
	got, err := ReadGeminiTranscript(path, 100)
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
	}
	// The snapshot a resume writes keeps no token counts (0.61.0): only
	// the answer after the resume has its usage.
	if u := got[5].Usage; u == nil || u.Input != 10 || u.Output == 0 {
		t.Fatalf("the last answer's usage = %+v", u)
	}
	if got[1].Usage != nil {
		t.Fatalf("an answer from the resume's snapshot has usage %+v; the recording has none", got[1].Usage)
	}
	if last, err := ReadGeminiTranscript(path, 1); err != nil || len(last) != 1 || last[0].Text != "answer to: --back after the stop" {
		t.Fatalf("last 1 = %+v, %v", last, err)
	}
}

func TestReadGeminiTranscript_RewindUpdatesAndHalfLines(t *testing.T) {
	lines := []string{
		`{"sessionId":"4d13a655-fab3-471c-ba6c-367258f4b072","projectHash":"x","kind":"main"}`,
		`{"id":"u1","timestamp":"2026-12-01T10:00:00Z","type":"user","content":[{"text":"<session_context>ctx"}]}`,
		`{"id":"u2","timestamp":"2026-12-01T10:00:01Z","type":"user","content":[{"text":"first"}]}`,
		`{"id":"g1","timestamp":"2026-12-01T10:00:02Z","type":"gemini","content":""}`,
		`{"id":"g1","timestamp":"2026-12-01T10:00:03Z","type":"gemini","content":"first answer","tokens":{"input":12,"output":3,"cached":2}}`,
		`{"$set":{"lastUpdated":"2026-12-01T10:00:03Z"}}`,
		`{"id":"u3","timestamp":"2026-12-01T10:00:04Z","type":"user","content":[{"text":"rewound away"}]}`,
		`{"id":"g2","timestamp":"2026-12-01T10:00:05Z","type":"gemini","content":"gone too"}`,
		`{"$rewindTo":"u3"}`,
		`{"id":"i1","timestamp":"2026-12-01T10:00:06Z","type":"info","content":"an info line"}`,
		`{"id":"u4","timestamp":"2026-12-01T10:00:07Z","type":"user","content":[{"text":"/stats"}]}`,
		`{"id":"u5","timestamp":"2026-12-01T10:00:08Z","type":"user","content":[{"text":"second"}]}`,
		`{"id":"g3","timestamp":"2026-12-01T10:00:09Z","type":"gemini","content":"half wri`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGeminiTranscript(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Role+":"+e.Text)
	}
	want := []string{"user:first", "assistant:first answer", "user:second"}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("entries = %q, want %q", texts, want)
	}
	if u := got[1].Usage; u == nil || *u != (loop.TokenUsage{Input: 10, Output: 3, CacheRead: 2}) {
		t.Fatalf("usage = %+v", got[1].Usage)
	}
	if none, err := ReadGeminiTranscript(filepath.Join(t.TempDir(), "missing.jsonl"), 3); none != nil || err != nil {
		t.Fatalf("missing: %v %v", none, err)
	}
}

// EnsureHooks adds the-loop's hook to each event of the user settings once,
// beside the operator's hooks and keys, replaces its command when the
// binary moved, writes nothing when all is there, and leaves a file that
// does not parse alone.
func TestGeminiEnsureHooks_AddsOnceBesideTheOperators(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "settings.json")
	theirs := `{"general":{"vimMode":true},"hooks":{"BeforeAgent":[{"hooks":[{"type":"command","command":"mine"}]}]}}`
	if err := os.WriteFile(path, []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	g := NewGemini(GeminiOptions{Env: func(string) string { return "" }, Home: home})
	events := []string{"SessionStart", "BeforeAgent"}
	// the CLI's form twice, a moved binary, then the hook program's form:
	// one entry per event all along, the last command in it
	for _, cmd := range []string{"'/a/the-loop'" + GeminiHookMarker, "'/a/the-loop'" + GeminiHookMarker, "'/b/the-loop'" + GeminiHookMarker, "'/b/the-loop-hook' --from-env --json"} {
		if err := g.EnsureHooks(cmd, events, 10000); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	var doc struct {
		General map[string]any `json:"general"`
		Hooks   map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.General["vimMode"] != true {
		t.Fatalf("settings %s (%v)", data, err)
	}
	if b := doc.Hooks["BeforeAgent"]; len(b) != 2 || b[0].Hooks[0].Command != "mine" || b[1].Hooks[0].Command != "'/b/the-loop-hook' --from-env --json" || b[1].Hooks[0].Timeout != 10000 {
		t.Fatalf("BeforeAgent hooks %+v", b)
	}
	if s := doc.Hooks["SessionStart"]; len(s) != 1 {
		t.Fatalf("SessionStart hooks %+v", s)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.EnsureHooks("x"+GeminiHookMarker, events, 1); err == nil {
		t.Fatal("a file that does not parse was edited")
	}
	if data, _ := os.ReadFile(path); string(data) != "{not json" {
		t.Fatalf("the broken file changed: %s", data)
	}
}
