package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

func TestLoad_NoFileGivesDefaults(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "missing.yaml")} {
		cfg, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%q): %v", path, err)
		}
		want := Default()
		want.Path = path
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("Load(%q) = %+v\nwant %+v", path, cfg, want)
		}
	}
}

func TestDefault_HasTheOriginalsDefaults(t *testing.T) {
	c := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"state.root", c.StateRoot, ".the-loop"},
		{"routing.defaultHarness", c.Routing.DefaultHarness, "claude"},
		{"routing.spawnWorkdir", c.Routing.SpawnWorkdir, "."},
		{"routing.tmux.remainOnExit", c.Routing.Tmux.RemainOnExit, true},
		{"routing.tmux.resumeOnRespawn", c.Routing.Tmux.ResumeOnRespawn, true},
		{"routing.tmux.resumeProbeSeconds", c.Routing.Tmux.ResumeProbe(), 2 * time.Second},
		{"routing.tmux.harnessKillGraceSeconds", c.Routing.Tmux.HarnessKillGrace(), 5 * time.Second},
		{"routing.tmux.socketName", c.Routing.Tmux.SocketName, ""},
		{"routing.tmux.submitDelayMs", c.Routing.Tmux.SubmitDelay(), 50 * time.Millisecond},
		{"routing.tmux.readySeconds", c.Routing.Tmux.ReadyTimeout(), 30 * time.Second},
		{"routing.harnessTrust", c.Routing.HarnessTrust, HarnessTrust{true, "workspace-root", "auto"}},
		{"service.addr", c.Service.Addr(), "127.0.0.1:4114"},
		{"service.enabled", c.Service.Enabled, true},
		{"service.exposed", c.Service.Exposed, false},
		{"service.autoStart", c.Service.AutoStart, true},
		{"service.mcp.enabled", c.Service.MCPEnabled, true},
		{"service.maxBodyBytes", c.Service.MaxBodyBytes, int64(1 << 20)},
		{"service.allowedHosts", c.Service.AllowedHosts == nil, true},
		{"eventLog.enabled", c.EventLog.Enabled, true},
		{"eventLog.maxEvents", c.EventLog.MaxEvents, 100000},
		{"eventLog.maxBytes", c.EventLog.MaxBytes, int64(256 << 20)},
		{"channels.slack.enabled", c.Slack.Enabled, false},
		{"channels.slack.botTokenEnv", c.Slack.BotTokenEnv, "THE_LOOP_SLACK_BOT_TOKEN"},
		{"channels.slack.appTokenEnv", c.Slack.AppTokenEnv, "THE_LOOP_SLACK_APP_TOKEN"},
		{"channels.slack.events", c.Slack.Events, []string{"session.awaiting_input"}},
		{"channels.slack.verbosity", c.Slack.Verbosity, "normal"},
		{"channels.slack.authorizedUsers", len(c.Slack.AuthorizedUsers), 0},
		{"channels.slack.read.mode", c.Slack.ReadMode, "poll"},
		{"channels.slack.read.intervalSeconds", c.Slack.PollInterval(), 30 * time.Second},
		{"channels.slack.retrySeconds", c.Slack.RetryWindow(), 600 * time.Second},
		{"integrations.github.cli.binary", c.GitHubBinary, "gh"},
		{"standingSessions.enabled", c.Standing.Enabled, false},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoad_AcceptsEveryTopLevelKeyOfTheOriginal(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Problems) != 0 || cfg.StandingErr != nil {
		t.Fatalf("Problems = %v, StandingErr = %v", cfg.Problems, cfg.StandingErr)
	}
	for _, key := range []string{"version", "state", "webhooks", "polling", "routing", "standingSessions",
		"collaborators", "notifications", "channels", "eventLog", "integrations", "service", "selfDiagnosis"} {
		if _, ok := cfg.Raw[key]; !ok {
			t.Errorf("fixture lacks top-level key %s", key)
		}
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"version", cfg.Version, "0.5.0"},
		{"routing.spawnWorkdir", cfg.Routing.SpawnWorkdir, "/srv/work"},
		{"routing.registryDir", cfg.Routing.RegistryDir, ".the-loop/local"},
		{"routing.harnessArgs", cfg.Routing.HarnessArgs, map[string][]string{"claude": {"--model", "opus"}, "cursor": {}}},
		{"routing.tmux.resumeOnRespawn", cfg.Routing.Tmux.ResumeOnRespawn, false},
		{"routing.tmux.harnessKillGraceSeconds", cfg.Routing.Tmux.HarnessKillGrace(), 7500 * time.Millisecond},
		{"routing.tmux.resumeProbeSeconds", cfg.Routing.Tmux.ResumeProbe(), 3 * time.Second},
		{"routing.harnessTrust", cfg.Routing.HarnessTrust, HarnessTrust{true, "directory", "never"}},
		{"service.port", cfg.Service.Port, 4115},
		{"service.mcp.enabled", cfg.Service.MCPEnabled, false},
		{"channels.slack", cfg.Slack, Slack{Enabled: true, BotTokenEnv: "MY_BOT_TOKEN", AppTokenEnv: "MY_APP_TOKEN",
			Channel: "C0CENTRAL", Events: []string{"session.awaiting_input"}, Verbosity: "verbose",
			AuthorizedUsers: []string{"U012345"}, ReadMode: "poll", IntervalSeconds: 15, RetrySeconds: 600}},
		{"eventLog.path", cfg.EventLog.Path, ".the-loop/logs/events.jsonl"},
		{"integrations.github.cli.binary", cfg.GitHubBinary, "/usr/local/bin/gh"},
		{"standingSessions.names", cfg.Standing.Names(), []string{"supervisor", "triage", "plain"}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	sup, _ := cfg.Standing.Get("supervisor")
	if !sup.SlackEnabled || sup.SlackChannel != "C0123456" || sup.HarnessArgs[1] != "opus" {
		t.Errorf("supervisor = %+v", sup)
	}
	tri, _ := cfg.Standing.Get("triage")
	if tri.Harness != "cursor" || tri.AutoStart || tri.Cwd != "/srv/triage" || len(tri.HarnessArgs) != 0 {
		t.Errorf("triage = %+v", tri)
	}
}

func TestLoad_AcceptsTheGoAdditions(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "additions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"routing.tmux.socketName", cfg.Routing.Tmux.SocketName, "the-loop"},
		{"routing.tmux.submitDelayMs", cfg.Routing.Tmux.SubmitDelay(), 120 * time.Millisecond},
		{"routing.tmux.readySeconds", cfg.Routing.Tmux.ReadyTimeout(), 12500 * time.Millisecond},
		{"channels.slack.apiUrl", cfg.Slack.APIURL, "http://127.0.0.1:9999/api/"},
		{"channels.slack.retrySeconds", cfg.Slack.RetryWindow(), 120 * time.Second},
		{"service.tokenEnv", cfg.Service.TokenEnv, "THE_LOOP_SERVICE_TOKEN"},
		{"service.allowedHosts", cfg.Service.AllowedHosts, []string{"loop.internal:4114"}},
		{"service.maxBodyBytes", cfg.Service.MaxBodyBytes, int64(2 << 20)},
		{"eventLog.maxEvents", cfg.EventLog.MaxEvents, 5000},
		{"eventLog.maxBytes", cfg.EventLog.MaxBytes, int64(64 << 20)},
		{"StateDir", cfg.StateDir(), "/var/lib/the-loop"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoad_RefusesOutsideStanding(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"unknown top-level key", "foo: 1\n",
			[]string{"foo: unknown key 'foo'", "allowed here: channels, collaborators"}},
		{"misspelt tmux key", "routing:\n  tmux:\n    socketNme: x\n",
			[]string{"routing.tmux.socketNme: unknown key 'socketNme' (did you mean 'socketName'?)"}},
		{"negative probe", "routing:\n  tmux:\n    resumeProbeSeconds: -1\n",
			[]string{"routing.tmux.resumeProbeSeconds: must be at least 0, got -1"}},
		{"negative submit delay", "routing:\n  tmux:\n    submitDelayMs: -5\n",
			[]string{"routing.tmux.submitDelayMs: must be at least 0, got -5"}},
		{"fractional submit delay", "routing:\n  tmux:\n    submitDelayMs: 2.5\n",
			[]string{"routing.tmux.submitDelayMs: expected an integer, got number 2.5"}},
		{"unknown harness", "routing:\n  defaultHarness: aider\n",
			[]string{"routing.defaultHarness: 'aider' is not one of: claude, codex, gemini, cursor"}},
		{"routing not a mapping", "routing: fast\n",
			[]string{"routing: expected a mapping, got string 'fast'"}},
		{"port a string", "service:\n  port: http\n",
			[]string{"service.port: expected an integer, got string 'http'"}},
		{"zero body limit", "service:\n  maxBodyBytes: 0\n",
			[]string{"service.maxBodyBytes: must be at least 1, got 0"}},
		{"zero retention", "eventLog:\n  maxEvents: 0\n",
			[]string{"eventLog.maxEvents: must be at least 1, got 0"}},
		{"event log bytes below a MiB", "eventLog:\n  maxBytes: 4096\n",
			[]string{"eventLog.maxBytes: must be at least 1048576, got 4096"}},
		{"slack interval too short", "channels:\n  slack:\n    read: {intervalSeconds: 1}\n",
			[]string{"channels.slack.read.intervalSeconds: must be at least 5, got 1"}},
		{"slack retry window zero", "channels:\n  slack:\n    retrySeconds: 0\n",
			[]string{"channels.slack.retrySeconds: must be at least 1, got 0"}},
		{"slack retry window fractional", "channels:\n  slack:\n    retrySeconds: 1.5\n",
			[]string{"channels.slack.retrySeconds: expected an integer, got number 1.5"}},
		{"collaborator without roles", "collaborators:\n  - handle: '@a'\n    roles: []\n",
			[]string{"collaborators[0].roles: needs at least 1 item(s), got 0"}},
		{"collaborator without handle", "collaborators:\n  - roles: [qa]\n",
			[]string{"collaborators[0].handle: required key is missing"}},
		{"unknown role", "notifications:\n  events:\n    session-died: [ceo]\n",
			[]string{"notifications.events.session-died[0]: 'ceo' is not one of"}},
		{"removed polling.stateFile", "polling:\n  stateFile: x.json\n",
			[]string{"polling.stateFile: removed in config 0.5.0"}},
		{"removed ghWebhook.routing", "webhooks:\n  ghWebhook:\n    routing: {}\n",
			[]string{"webhooks.ghWebhook.routing: removed in config 0.5.0", "top-level `routing`"}},
		{"removed integrations.slack", "integrations:\n  slack: {}\n",
			[]string{"integrations.slack: removed in config 0.5.0", "channels.slack"}},
		{"removed ghBinary", "routing:\n  ghBinary: /usr/bin/gh\n",
			[]string{"routing.ghBinary: removed in config 0.5.0", "integrations.github.cli.binary"}},
		{"removed nested ghBinary", "webhooks:\n  ghWebhook:\n    ghBinary: gh\n",
			[]string{"webhooks.ghWebhook.ghBinary: removed in config 0.5.0"}},
		{"old version", "version: 0.4.9\n",
			[]string{"version: the file declares version '0.4.9', older than 0.5.0", `version: "0.5.0"`}},
		{"not a version", "version: latest\n",
			[]string{"version: 'latest' is not a version number"}},
		{"list at top level", "- a\n- b\n",
			[]string{"(top level): the file holds a list, not a mapping"}},
		{"scalar at top level", "hello\n",
			[]string{"(top level): the file holds a plain string, not a mapping"}},
		{"unparseable YAML", "routing: [a\n",
			[]string{"cannot load the CLI config ", "yaml:"}},
		{"duplicate YAML key", "state: {root: a}\nstate: {root: b}\n",
			[]string{"already defined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.body)
			cfg, err := Load(path)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", cfg)
			}
			if code := loop.ErrorCode(err); code != loop.EINVALID {
				t.Errorf("code = %q, want %q", code, loop.EINVALID)
			}
			msg := err.Error()
			mustContain(t, msg, append([]string{"cannot load the CLI config " + path}, tt.want...)...)
			noPointers(t, msg)
		})
	}
}

func TestLoad_RemovedKeyIsNotAlsoAnUnknownKey(t *testing.T) {
	_, err := Load(writeConfig(t, "polling:\n  stateFile: x\n"))
	if err == nil || strings.Contains(err.Error(), "unknown key") {
		t.Errorf("err = %v, want only the migration remedy", err)
	}
}

func TestLoad_AcceptsCurrentAndNewerVersions(t *testing.T) {
	for _, v := range []string{"0.5.0", "0.5", "v0.5.1", "1.0.0", "0.10.0", "0.5.0-rc1"} {
		if _, err := Load(writeConfig(t, fmt.Sprintf("version: %q\n", v))); err != nil {
			t.Errorf("version %s: %v", v, err)
		}
	}
}

func TestLoad_ClassifiesStandingAndOtherFailures(t *testing.T) {
	standingOnly := "standingSessions:\n  sessions:\n    - name: a\n    - name: a\n"
	cfg, err := Load(writeConfig(t, standingOnly))
	if err != nil {
		t.Fatalf("standingSessions-only problem failed Load: %v", err)
	}
	if cfg.StandingErr == nil || cfg.Standing != nil {
		t.Errorf("StandingErr = %v, Standing = %+v", cfg.StandingErr, cfg.Standing)
	}
	if cfg.Service.Port != 4114 {
		t.Error("the rest of the config was not read")
	}

	both := standingOnly + "routing:\n  tmux:\n    resumeProbeSeconds: -2\n"
	_, err = Load(writeConfig(t, both))
	if err == nil {
		t.Fatal("routing problem did not fail Load")
	}
	mustContain(t, err.Error(), "2 problems", "routing.tmux.resumeProbeSeconds", "standingSessions.sessions[1]")
	if i, j := strings.Index(err.Error(), "routing."), strings.Index(err.Error(), "standingSessions."); i > j {
		t.Errorf("problems are not sorted by key path:\n%s", err)
	}
}

func TestLoad_EmptySectionsCountAsAbsent(t *testing.T) {
	cfg, err := Load(writeConfig(t, "state:\nrouting:\n  tmux:\nservice:\nstandingSessions:\n  sessions:\n    - name: a\n      slack:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateRoot != ".the-loop" || cfg.Service.Port != 4114 || cfg.StandingErr != nil {
		t.Errorf("cfg = %+v, StandingErr = %v", cfg, cfg.StandingErr)
	}
	// A scalar left empty is not a section: it is refused.
	if _, err := Load(writeConfig(t, "state:\n  root:\n")); err == nil {
		t.Error("state.root: null was accepted")
	}
}

func TestLoad_RefusesAnUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir) // a directory
	if err == nil || loop.ErrorCode(err) != loop.EINVALID {
		t.Fatalf("err = %v", err)
	}
	mustContain(t, err.Error(), "cannot load the CLI config "+dir)
}

func TestLoad_ConcurrentLoadsShareTheSchema(t *testing.T) {
	path := filepath.Join("testdata", "full.yaml")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Load(path); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConfig_StateDirResolvesAgainstTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", "/home/op")
	cases := map[string]string{
		".the-loop":   filepath.Join(dir, ".the-loop"),
		"state/x":     filepath.Join(dir, "state", "x"),
		"/abs/root":   "/abs/root",
		"~/loopstate": "/home/op/loopstate",
	}
	for root, want := range cases {
		c := Default()
		c.StateRoot = root
		if got := c.StateDir(); got != want {
			t.Errorf("StateDir(%q) = %q, want %q", root, got, want)
		}
	}
}

func TestValidate_ReturnsEveryProblemWithDottedPaths(t *testing.T) {
	errs := Validate([]byte(`foo: 1
routing:
  tmux: {resumeProbeSeconds: -1, socketName: 3}
standingSessions:
  sessions:
    - name: A
`))
	var msgs []string
	for _, e := range errs {
		if loop.ErrorCode(e) != loop.EINVALID {
			t.Errorf("%v: code %q", e, loop.ErrorCode(e))
		}
		msgs = append(msgs, e.Error())
		noPointers(t, e.Error())
	}
	want := []string{"foo: ", "routing.tmux.resumeProbeSeconds: ", "routing.tmux.socketName: ", "standingSessions.sessions[0].name: "}
	if len(msgs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(msgs), len(want), strings.Join(msgs, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, msgs[i], w)
		}
	}
	if errs := Validate([]byte("{}")); errs != nil {
		t.Errorf("valid document: %v", errs)
	}
}

func TestValidateFile_NamesAMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	errs := ValidateFile(p)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), p) {
		t.Errorf("errs = %v", errs)
	}
	if errs := ValidateFile(filepath.Join("testdata", "full.yaml")); errs != nil {
		t.Errorf("full.yaml: %v", errs)
	}
}

func TestLoad_LargeIntegersAndTimestampsStayJSONValues(t *testing.T) {
	// A timestamp-looking version is its text, not a time; an integer beyond
	// int64 is still an integer.
	cfg, err := Load(writeConfig(t, "version: 2024-01-02\nservice: {maxBodyBytes: 18446744073709551615}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != "2024-01-02" {
		t.Errorf("Version = %q", cfg.Version)
	}
}

func TestSchema_IsOursAndDeclaresTheAdditions(t *testing.T) {
	s := Schema()
	for _, want := range []string{SchemaID, `"socketName"`, `"submitDelayMs"`, `"readySeconds"`, `"maxEvents"`,
		`"apiUrl"`, `"retrySeconds"`, `"tokenEnv"`, `"allowedHosts"`, `"maxBodyBytes"`, `"$ref": "collaborators.schema.json#/$defs/collaborator"`} {
		if !strings.Contains(string(s), want) {
			t.Errorf("schema lacks %s", want)
		}
	}
	if strings.Contains(string(s), "MadaraUchiha-314/the-loop/.the-loop/cli-config") {
		t.Error("schema keeps the original's $id")
	}
	onDisk, err := os.ReadFile(filepath.Join("schema", "cli-config.schema.json"))
	if err != nil || !slices.Equal(onDisk, s) {
		t.Error("Schema() is not the file in schema/")
	}
}
