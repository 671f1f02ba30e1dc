package harness

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
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
