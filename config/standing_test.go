package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// loadStanding loads body and demands the load succeed (a standingSessions
// problem never fails Load).
func loadStanding(t *testing.T, body string) *Config {
	t.Helper()
	cfg, err := Load(writeConfig(t, body))
	if err != nil {
		t.Fatalf("Load failed, want success with StandingErr: %v", err)
	}
	return cfg
}

func TestLoad_RefusesMalformedStandingBlock(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"step 2: block is a list", "standingSessions: [a, b]\n",
			[]string{"standingSessions: the section is not a mapping", "expected `enabled` and `sessions`"}},
		{"step 2: block is a string", "standingSessions: on\n",
			[]string{"standingSessions: the section is not a mapping"}},
		{"step 4: sessions is a string", "standingSessions:\n  sessions: supervisor\n",
			[]string{"standingSessions.sessions: expected a list of entries"}},
		{"step 4: sessions is a mapping", "standingSessions:\n  sessions: {name: a}\n",
			[]string{"standingSessions.sessions: expected a list of entries, got mapping"}},
		{"step 4: sessions is null", "standingSessions:\n  sessions:\n",
			[]string{"standingSessions.sessions: expected a list of entries, got null"}},
		{"step 5: entry is a string", "standingSessions:\n  sessions: [supervisor]\n",
			[]string{"standingSessions.sessions[0]: expected a mapping"}},
		{"step 6: uppercase name", "standingSessions:\n  sessions:\n    - name: Supervisor\n",
			[]string{"standingSessions.sessions[0].name: 'Supervisor' is not lowercase", "e.g. 'supervisor'", "tmux session"}},
		{"step 6: missing name", "standingSessions:\n  sessions:\n    - name: ok\n    - description: x\n",
			[]string{"standingSessions.sessions[1]: name is missing"}},
		{"step 6: empty name", "standingSessions:\n  sessions:\n    - name: ''\n",
			[]string{"standingSessions.sessions[0].name: '' is not"}},
		{"step 6: leading hyphen", "standingSessions:\n  sessions:\n    - name: -a\n",
			[]string{"standingSessions.sessions[0].name: '-a' is not"}},
		{"step 6: 41 characters", "standingSessions:\n  sessions:\n    - name: " + strings.Repeat("a", 41) + "\n",
			[]string{"standingSessions.sessions[0].name:", "(max 40)"}},
		{"step 6: number", "standingSessions:\n  sessions:\n    - name: 123\n",
			[]string{"standingSessions.sessions[0].name: 123 is not"}},
		{"step 8: prompt and promptFile", "standingSessions:\n  sessions:\n    - name: a\n    - name: b\n      prompt: hi\n      promptFile: brief.md\n",
			[]string{"standingSessions.sessions[1] (b): declares both `prompt` and `promptFile`", "keep one"}},
		{"step 9: harnessArgs a string", "standingSessions:\n  sessions:\n    - name: a\n      harnessArgs: --model opus\n",
			[]string{"standingSessions.sessions[0] (a): harnessArgs must be a list of strings"}},
		{"step 10: slack a boolean", "standingSessions:\n  sessions:\n    - name: a\n      slack: true\n",
			[]string{"standingSessions.sessions[0] (a): slack must be a mapping"}},
		{"schema: unknown harness", "standingSessions:\n  sessions:\n    - name: a\n      harness: aider\n",
			[]string{"standingSessions.sessions[0].harness: 'aider' is not one of: claude, codex, gemini, cursor, "}},
		{"schema: unknown entry key", "standingSessions:\n  sessions:\n    - name: a\n      promt: hi\n",
			[]string{"standingSessions.sessions[0].promt: unknown key 'promt' (did you mean 'prompt'?)", "allowed here:"}},
		{"schema: unknown block key", "standingSessions:\n  enable: true\n",
			[]string{"standingSessions.enable: unknown key 'enable' (did you mean 'enabled'?)"}},
		{"schema: autoStart a string", "standingSessions:\n  sessions:\n    - name: a\n      autoStart: 'yes'\n",
			[]string{"standingSessions.sessions[0].autoStart: expected a boolean, got string 'yes'"}},
		{"schema: harnessArgs element a number", "standingSessions:\n  sessions:\n    - name: a\n      harnessArgs: [--x, 1]\n",
			[]string{"standingSessions.sessions[0].harnessArgs[1]: expected a string, got integer 1"}},
		{"schema: slack channel a number", "standingSessions:\n  sessions:\n    - name: a\n      slack: {channel: 5}\n",
			[]string{"standingSessions.sessions[0].slack.channel: expected a string"}},
		{"schema: an unknown permission mode", "standingSessions:\n  sessions:\n    - name: a\n      permissionMode: yolo\n",
			[]string{"standingSessions.sessions[0].permissionMode: 'yolo' is not one of: manual, default, auto, acceptEdits, dontAsk, plan, bypassPermissions"}},
		{"a permission mode on codex", "standingSessions:\n  sessions:\n    - name: a\n      harness: codex\n      permissionMode: plan\n",
			[]string{"standingSessions.sessions[0] (a): permissionMode is a Claude Code setting; harness codex has none"}},
		{"bypassPermissions without its consent", "standingSessions:\n  sessions:\n    - name: a\n      permissionMode: bypassPermissions\n",
			[]string{"standingSessions.sessions[0] (a): permissionMode bypassPermissions runs every tool unasked", "allowBypassPermissions: true"}},
		{"bypassPermissions as the block's default", "standingSessions:\n  permissionMode: bypassPermissions\n  sessions:\n    - name: a\n      allowBypassPermissions: true\n",
			[]string{"standingSessions.permissionMode: permissionMode bypassPermissions runs every tool unasked and is never a default"}},
		{"a mode beside harnessArgs' own", "standingSessions:\n  permissionMode: plan\n  sessions:\n    - name: a\n      harnessArgs: [--dangerously-skip-permissions]\n",
			[]string{"standingSessions.sessions[0] (a): permissionMode plan and harnessArgs' --dangerously-skip-permissions both set the permission mode; keep one"}},
		{"a mode beside --permission-mode=", "standingSessions:\n  sessions:\n    - name: a\n      permissionMode: auto\n      harnessArgs: [--permission-mode=plan]\n",
			[]string{"standingSessions.sessions[0] (a): permissionMode auto and harnessArgs' --permission-mode both set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadStanding(t, tt.body)
			if cfg.StandingErr == nil {
				t.Fatal("StandingErr is nil")
			}
			if cfg.Standing != nil {
				t.Errorf("Standing = %+v, want nil (never half-applied)", cfg.Standing)
			}
			if code := loop.ErrorCode(cfg.StandingErr); code != loop.EINVALID {
				t.Errorf("code = %q, want %q", code, loop.EINVALID)
			}
			msg := cfg.StandingErr.Error()
			mustContain(t, msg, tt.want...)
			noPointers(t, msg)
		})
	}
}

// An entry's permissionMode is its own; the block's applies to the claude
// entries that set none, and to no other harness; bypassPermissions with
// its consent is kept.
func TestLoad_PermissionModeIsTheEntrysElseTheBlocksForClaude(t *testing.T) {
	cfg := loadStanding(t, `standingSessions:
  permissionMode: manual
  sessions:
    - name: a
    - name: b
      permissionMode: plan
    - name: c
      harness: codex
    - name: d
      permissionMode: bypassPermissions
      allowBypassPermissions: true
`)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	want := map[string]string{"a": "manual", "b": "plan", "c": "", "d": "bypassPermissions"}
	for name, mode := range want {
		if d, _ := cfg.Standing.Get(name); d.PermissionMode != mode {
			t.Errorf("%s: permission mode %q, want %q", name, d.PermissionMode, mode)
		}
	}
	if m := cfg.Standing.ModeFor("claude", ""); m != "manual" {
		t.Errorf("a created claude session's mode %q, want the block's", m)
	}
	if m := cfg.Standing.ModeFor("gemini", ""); m != "" {
		t.Errorf("a created gemini session's mode %q, want none", m)
	}
}

func TestLoad_RefusesDuplicateNames(t *testing.T) {
	cfg := loadStanding(t, `standingSessions:
  sessions:
    - name: supervisor
    - name: triage
    - name: supervisor
`)
	if cfg.StandingErr == nil {
		t.Fatal("StandingErr is nil")
	}
	mustContain(t, cfg.StandingErr.Error(),
		"standingSessions.sessions[2]: name 'supervisor' is already declared at sessions[0]",
		"no defined winner")
}

func TestLoad_ReportsAStandingProblemOnce(t *testing.T) {
	// The schema's pattern and the parser's name check find the same fault:
	// only the parser's words are kept.
	cfg := loadStanding(t, "standingSessions:\n  sessions:\n    - name: Bad\n")
	msg := cfg.StandingErr.Error()
	if strings.Contains(msg, "does not match") || strings.Count(msg, "sessions[0]") != 1 {
		t.Errorf("want one problem, got: %s", msg)
	}
}

func TestLoad_ReportsEveryStandingProblemInOrder(t *testing.T) {
	cfg := loadStanding(t, `standingSessions:
  sessions:
    - name: a
    - {name: b, slack: yes}
    - name: a
    - {name: c, prompt: x, promptFile: y}
`)
	msg := cfg.StandingErr.Error()
	i1 := strings.Index(msg, "sessions[1]")
	i2 := strings.Index(msg, "sessions[2]")
	i3 := strings.Index(msg, "sessions[3]")
	if i1 < 0 || i2 < 0 || i3 < 0 || !(i1 < i2 && i2 < i3) {
		t.Errorf("want problems of sessions[1], [2], [3] in order, got: %s", msg)
	}
}

func TestLoad_StandingDefaultsInheritRouting(t *testing.T) {
	cfg := loadStanding(t, `routing:
  defaultHarness: cursor
  spawnWorkdir: /srv/work
  harnessArgs:
    cursor: [--fast]
    claude: [--model, opus]
standingSessions:
  enabled: true
  sessions:
    - name: inherits
    - name: empty-strings
      harness: ""
      cwd: ""
    - name: explicit-none
      harnessArgs: []
    - name: own
      harness: claude
      harnessArgs: [--verbose]
      cwd: /srv/own
      autoStart: false
      slack: {enabled: true, channel: C1}
    - name: claude-inherits
      harness: claude
`)
	if cfg.StandingErr != nil {
		t.Fatal(cfg.StandingErr)
	}
	if !cfg.Standing.Enabled {
		t.Error("Enabled = false")
	}
	tests := []struct {
		name    string
		harness string
		args    []string
		cwd     string
		auto    bool
		slack   bool
	}{
		{"inherits", "cursor", []string{"--fast"}, "/srv/work", true, false},
		{"empty-strings", "cursor", []string{"--fast"}, "/srv/work", true, false},
		{"explicit-none", "cursor", []string{}, "/srv/work", true, false},
		{"own", "claude", []string{"--verbose"}, "/srv/own", false, true},
		{"claude-inherits", "claude", []string{"--model", "opus"}, "/srv/work", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := cfg.Standing.Get(tt.name)
			if !ok {
				t.Fatalf("%s not declared", tt.name)
			}
			if d.Harness != tt.harness || d.Cwd != tt.cwd || d.AutoStart != tt.auto || d.SlackEnabled != tt.slack || !d.Declared {
				t.Errorf("got %+v", d)
			}
			if !slices.Equal(d.HarnessArgs, tt.args) || (d.HarnessArgs == nil) != (tt.args == nil) {
				t.Errorf("HarnessArgs = %#v, want %#v", d.HarnessArgs, tt.args)
			}
		})
	}
}

func TestLoad_StandingDefaultsWithoutRouting(t *testing.T) {
	cfg := loadStanding(t, "standingSessions:\n  sessions:\n    - name: a\n      promptFile: ~/brief.md\n")
	d, ok := cfg.Standing.Get("a")
	if !ok {
		t.Fatal("a not declared")
	}
	// Relative paths resolve against the project directory, ~ against the
	// home directory (decisions D27).
	home, _ := os.UserHomeDir()
	want := loop.StandingDefinition{Name: "a", Harness: "claude", Cwd: cfg.ProjectDir, PromptFile: filepath.Join(home, "brief.md"), AutoStart: true, Declared: true}
	if cfg.ProjectDir == "" || cfg.ProjectDir != filepath.Dir(cfg.Path) {
		t.Errorf("ProjectDir = %q for %s", cfg.ProjectDir, cfg.Path)
	}
	if d.HarnessArgs != nil {
		t.Errorf("HarnessArgs = %#v, want nil (nothing to inherit)", d.HarnessArgs)
	}
	d.HarnessArgs = nil
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
	if cfg.Standing.Enabled {
		t.Error("Enabled defaults to false")
	}
}

func TestLoad_AbsentOrEmptyStandingBlockIsDisabled(t *testing.T) {
	for _, body := range []string{"", "state: {root: x}\n", "standingSessions:\n", "standingSessions: {}\n", "standingSessions:\n  enabled: true\n"} {
		cfg := loadStanding(t, body)
		if cfg.StandingErr != nil || cfg.Standing == nil || len(cfg.Standing.Sessions) != 0 {
			t.Errorf("%q: Standing = %+v, StandingErr = %v", body, cfg.Standing, cfg.StandingErr)
		}
	}
}

func TestStandingConfig_GetReturnsACopy(t *testing.T) {
	cfg := loadStanding(t, "standingSessions:\n  sessions:\n    - {name: a, harnessArgs: [--x]}\n")
	d, _ := cfg.Standing.Get("a")
	d.HarnessArgs[0] = "changed"
	again, _ := cfg.Standing.Get("a")
	if again.HarnessArgs[0] != "--x" {
		t.Error("Get shares the config's slice")
	}
	if _, ok := cfg.Standing.Get("nope"); ok {
		t.Error("Get found an undeclared name")
	}
	var none *StandingConfig
	if _, ok := none.Get("a"); ok || none.Names() != nil {
		t.Error("nil StandingConfig declares something")
	}
	if got := cfg.Standing.Names(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Names = %v", got)
	}
}

func TestLoad_StandingErrIsInvalid(t *testing.T) {
	cfg := loadStanding(t, "standingSessions: 3\n")
	var le *loop.Error
	if !errors.As(cfg.StandingErr, &le) || le.Code != loop.EINVALID {
		t.Fatalf("StandingErr = %#v", cfg.StandingErr)
	}
	if len(cfg.Problems) != 1 {
		t.Errorf("Problems = %v", cfg.Problems)
	}
}
