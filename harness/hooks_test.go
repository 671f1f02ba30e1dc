package harness

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	loop "github.com/the-loop-dev/the-loop"
)

// codexHookArgs declares each Codex hook as a -c override whose value is
// TOML Codex parses to the hook list (the command quoted whatever it
// holds), turns hooks on, and adds the hook-trust bypass once.
func TestCodexHookArgs_AreTOMLOverrides(t *testing.T) {
	cmd := `'/opt/the loop/bin"x' hook --state-root '/s' --session 'standing:a'`
	args := codexHookArgs(cmd, []string{"--model", "o3"}, 10)
	if args[0] != "-c" || args[1] != "features.codex_hooks=true" || args[len(args)-3] != CodexBypassHookTrust || args[len(args)-2] != "--model" {
		t.Fatalf("args %q", args)
	}
	seen := map[string]bool{}
	for i := 2; i+1 < len(args) && args[i] == "-c"; i += 2 {
		key, value, _ := strings.Cut(args[i+1], "=")
		var doc struct {
			V []struct {
				Hooks []struct {
					Type, Command string
					Timeout       int
				}
			}
		}
		if _, err := toml.Decode("v = "+value, &doc); err != nil {
			t.Fatalf("%s is not TOML: %v", args[i+1], err)
		}
		if len(doc.V) != 1 || len(doc.V[0].Hooks) != 1 || doc.V[0].Hooks[0].Command != cmd || doc.V[0].Hooks[0].Type != "command" || doc.V[0].Hooks[0].Timeout != 10 {
			t.Fatalf("%s decodes to %+v", key, doc)
		}
		seen[strings.TrimPrefix(key, "hooks.")] = true
	}
	for _, ev := range CodexHookEvents {
		if !seen[ev] {
			t.Errorf("no override for %s in %q", ev, args)
		}
	}
	if again := codexHookArgs(cmd, []string{CodexBypassHookTrust}, 10); strings.Count(strings.Join(again, " "), CodexBypassHookTrust) != 1 {
		t.Fatalf("the bypass twice: %q", again)
	}
}

// The Gemini CLI's hooks are one entry per event in its user settings,
// whose command reads the session from the spawn's environment: WireHooks
// writes them there and hands back the environment, the args untouched.
func TestGeminiWireHooks_DeclaresInTheUserSettingsAndNamesTheSessionInTheEnvironment(t *testing.T) {
	home := t.TempDir()
	g := NewGemini(GeminiOptions{Env: func(string) string { return "" }, Home: home})
	env := map[string]string{"THE_LOOP_HOOK_STATE_ROOT": "/s", "THE_LOOP_HOOK_SESSION": "standing:a"}
	w := loop.HookWiring{EnvCommand: "'/a/the-loop'" + GeminiHookMarker, Env: env, Args: []string{"--model", "m"}, TimeoutSeconds: 10}
	args, got, err := g.WireHooks(w)
	if err != nil || strings.Join(args, " ") != "--model m" || got["THE_LOOP_HOOK_SESSION"] != "standing:a" || len(got) != 2 {
		t.Fatalf("WireHooks: %q %v %v", args, got, err)
	}
	path, events, err := g.HookEntries()
	if err != nil || len(events) != len(GeminiHookEvents) || !strings.HasPrefix(path, home) {
		t.Fatalf("hook entries %s %v %v", path, events, err)
	}
	w.EnvCommand = "'/a/the-loop' hook --session x"
	if _, _, err := g.WireHooks(w); loop.ErrorCode(err) != loop.EINTERNAL {
		t.Fatalf("a command EnsureHooks could not tell as the-loop's: %v", err)
	}
}

// Every adapter answers every capability: only codex captures its id and
// joins a running turn, only gemini asks for a longer submit delay, and
// cursor reads no transcript and refuses to capture an id.
func TestAdapters_AnswerEveryCapability(t *testing.T) {
	r := NewRegistry(ClaudeOptions{Home: t.TempDir()})
	for _, name := range r.Names() {
		a, _ := r.Lookup(name, "x")
		if got, want := a.CapturesSessionID(), name == "codex"; got != want {
			t.Errorf("%s CapturesSessionID %v", name, got)
		}
		if got, want := a.JoinsRunningTurn(), name == "codex"; got != want {
			t.Errorf("%s JoinsRunningTurn %v", name, got)
		}
		if got, want := a.SubmitDelay() > 0, name == "gemini"; got != want {
			t.Errorf("%s SubmitDelay %v", name, a.SubmitDelay())
		}
		if got, want := a.ReadsTranscripts(), name != "cursor"; got != want {
			t.Errorf("%s ReadsTranscripts %v", name, got)
		}
		if !a.CapturesSessionID() {
			if _, err := a.CaptureSessionID(t.Context(), 1, 0); loop.ErrorCode(err) != loop.EINTERNAL || !strings.Contains(loop.ErrorMessage(err), name) {
				t.Errorf("%s CaptureSessionID: %v", name, err)
			}
		}
	}
}

// A claude spawn's settings declare the decision hook for
// PermissionRequest with its own timeout, and the rules hook for
// PreToolUse with every hook's, only when they are given.
func TestClaudeWireHooks_TheDecisionAndRulesHooksOnlyWhenGiven(t *testing.T) {
	files := map[string][]byte{}
	wire := func(decision, rules string) map[string][]map[string][]map[string]any {
		w := loop.HookWiring{Command: "h", DecisionCommand: decision, RulesCommand: rules, DecisionTimeoutSeconds: 610, TimeoutSeconds: 10,
			SettingsPath: "/s.json", WriteFile: func(p string, data []byte) error { files[p] = data; return nil }}
		if _, _, err := (&Claude{}).WireHooks(w); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Hooks map[string][]map[string][]map[string]any `json:"hooks"`
		}
		if err := json.Unmarshal(files["/s.json"], &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Hooks
	}
	hooks := wire("d --await-decision 600", "r --rules f")
	if got := hooks["PermissionRequest"]; len(got) != 1 || got[0]["hooks"][0]["command"] != "d --await-decision 600" || got[0]["hooks"][0]["timeout"] != float64(610) {
		t.Errorf("PermissionRequest = %v", got)
	}
	if got := hooks["PreToolUse"]; len(got) != 1 || got[0]["hooks"][0]["command"] != "r --rules f" || got[0]["hooks"][0]["timeout"] != float64(10) {
		t.Errorf("PreToolUse = %v", got)
	}
	hooks = wire("", "")
	if _, ok := hooks["PermissionRequest"]; ok {
		t.Errorf("a PermissionRequest hook with no decision command: %v", hooks["PermissionRequest"])
	}
	if _, ok := hooks["PreToolUse"]; ok {
		t.Errorf("a PreToolUse hook with no rules: %v", hooks["PreToolUse"])
	}
}
