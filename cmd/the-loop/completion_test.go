package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

func TestComplete_VerbsFlagsValuesAndNames(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("the-loop"))
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string { return []string{"beta", "alpha", "alps"} }
	tests := []struct {
		words []string
		want  []string
	}{
		{[]string{"st"}, []string{"standing", "start", "status", "stop"}},
		{[]string{"se"}, []string{"serve", "service", "sessions"}},
		{[]string{"sta"}, []string{"standing", "start", "status"}},
		{[]string{"internal"}, nil}, // hidden
		{[]string{"__"}, nil},       // hidden
		{[]string{"standing", "s"}, []string{"say", "start", "stop"}},
		{[]string{"standing", "stop", ""}, []string{"alpha", "alps", "beta"}},
		{[]string{"standing", "say", "al"}, []string{"alpha", "alps"}},
		{[]string{"-c", "x.yaml", "standing", "restart", "b"}, []string{"beta"}},
		{[]string{"standing", "say", "alpha", "--te"}, []string{"--text", "--text-file"}},
		{[]string{"standing", "create", ""}, nil}, // a new name: nothing to offer
		{[]string{"standing", "stop", "alpha", ""}, nil},
		{[]string{"events", "--standing", ""}, []string{"alpha", "alps", "beta"}},
		{[]string{"events", "--format", ""}, []string{"json", "jsonl", "table"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"events", "--format", "=", ""}, []string{"json", "jsonl", "table"}}, // bash's split of --format=
		{[]string{"events", "--format", "="}, []string{"json", "jsonl", "table"}},
		{[]string{"events", "--format", "=", "json", ""}, nil},
		{[]string{"events", "--format=js"}, []string{"--format=json", "--format=jsonl"}}, // zsh and fish
		{[]string{"events", "--standing=a"}, []string{"--standing=alpha", "--standing=alps"}},
		{[]string{"--ver"}, []string{"--verbose", "--version"}},
		{[]string{"in"}, []string{"init"}},
		{[]string{"standing", "list", "--f"}, []string{"--format"}},
	}
	all := complete(parser.Model.Node, []string{""}, names)
	for _, verb := range []string{"start", "standing", "events", "completion", "config", "init"} {
		if !slices.Contains(all, verb) {
			t.Errorf("the verbs %q lack %q", all, verb)
		}
	}
	for _, hidden := range []string{"internal-exec", "__complete"} {
		if slices.Contains(all, hidden) {
			t.Errorf("the verbs %q offer the hidden %q", all, hidden)
		}
	}
	for _, tt := range tests {
		if got := complete(parser.Model.Node, tt.words, names); !slices.Equal(got, tt.want) {
			t.Errorf("complete(%q) = %q, want %q", tt.words, got, tt.want)
		}
	}
}

// completionWorld is a directory whose ./.the-loop/cli-config.yaml declares
// a standing session and whose store records a created one; PATH finds the
// built binary as the-loop.
func completionWorld(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	state := filepath.Join(dir, "state")
	cfg := "state: {root: " + state + "}\nservice: {enabled: false}\nstandingSessions:\n  enabled: true\n  sessions:\n    - {name: declared-one, prompt: hi}\n"
	if err := os.MkdirAll(filepath.Join(dir, ".the-loop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".the-loop", "cli-config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(state, "the-loop.db"), store.Options{Transient: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *store.Tx) error { return tx.PutStanding(&loop.StandingRecord{Name: "created-one"}) }); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	env = append(filterEnv(os.Environ(), "PATH", "THE_LOOP_CLI_CONFIG", "HOME"),
		"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
	return dir, env
}

func runShell(t *testing.T, dir string, env []string, shell string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstdout: %s\nstderr: %s", shell, args, err, out.String(), errb.String())
	}
	return out.String()
}

func TestCompletion_PrintsAScriptPerShell(t *testing.T) {
	checks := map[string]string{
		"bash": "complete -o default -F _the_loop the-loop",
		"zsh":  "#compdef the-loop",
		"fish": "complete -c the-loop -f -a '(__the_loop_complete)'",
	}
	dir := t.TempDir()
	for shell, marker := range checks {
		cmd := exec.Command(binary, "completion", shell)
		cmd.Dir = dir // no config: completion needs none
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(string(out), marker) || !strings.Contains(string(out), "__complete --") {
			t.Errorf("completion %s lacks %q or the __complete call:\n%s", shell, marker, out)
		}
		if _, err := exec.LookPath(shell); err != nil {
			continue // the syntax check needs the shell
		}
		script := filepath.Join(t.TempDir(), "script")
		if err := os.WriteFile(script, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(shell, "-n", script).CombinedOutput(); err != nil {
			t.Errorf("%s -n on the %s script: %v\n%s", shell, shell, err, out)
		}
	}
	if r := exec.Command(binary, "completion", "tcsh"); r.Run() == nil {
		t.Error("completion tcsh succeeded")
	}
}

func TestCompletion_BashCompletesVerbsAndStandingNames(t *testing.T) {
	dir, env := completionWorld(t)
	complete := func(words ...string) string {
		t.Helper()
		script := `source <(the-loop completion bash) && COMP_WORDS=(` + shellWords(words) + `) && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _the_loop && printf '%s\n' "${COMPREPLY[@]}"`
		return runShell(t, dir, env, "bash", "-c", script)
	}
	if got := complete("the-loop", "sta"); got != "standing\nstart\nstatus\n" {
		t.Errorf("verb prefix: COMPREPLY %q", got)
	}
	if got := complete("the-loop", "standing", "stop", ""); got != "created-one\ndeclared-one\n" {
		t.Errorf("names: COMPREPLY %q", got)
	}
	if got := complete("the-loop", "standing", "say", "cr"); got != "created-one\n" {
		t.Errorf("name prefix: COMPREPLY %q", got)
	}
}

func TestCompletion_NamesLeaveNoStoreBehind(t *testing.T) {
	dir, env := completionWorld(t)
	state := filepath.Join(dir, "state")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if got := runShell(t, dir, env, binary, "__complete", "--", "standing", "start", ""); got != "declared-one\n" {
		t.Errorf("names without a store: %q", got)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("completing names created the state root (stat: %v)", err)
	}
}

func TestCompletion_NamesFromAHeldStoreAreBounded(t *testing.T) {
	dir, env := completionWorld(t)
	held, err := store.Open(filepath.Join(dir, "state", "the-loop.db"), store.Options{}) // as a service holds it
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// The service is disabled: only the config's names can be had. The store
	// stays held until the test ends, so a completion that answers at all
	// gave up on it by itself (store.StandingNames's test holds that it
	// gives up on the wait it is given).
	if got := runShell(t, dir, env, binary, "__complete", "--", "standing", "stop", ""); got != "declared-one\n" {
		t.Errorf("names beside a held store: %q", got)
	}
}

func TestCompletion_NamesComeFromTheServiceThatHoldsTheStore(t *testing.T) {
	e, _ := serviceEnv(t, `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%}}
standingSessions:
  enabled: true
  sessions:
    - {name: declared-one, cwd: %DIR%, autoStart: false}
`)
	e.must(0, "start")
	e.must(0, "standing", "create", "made-at-runtime", "--cwd", e.dir, "--no-start")
	if r := e.must(0, "__complete", "--", "standing", "stop", ""); r.stdout != "declared-one\nmade-at-runtime\n" {
		t.Errorf("names with the service up: %s", r)
	}
}

func TestCompletion_FishAndZshOfferTheSameCandidates(t *testing.T) {
	dir, env := completionWorld(t)
	if _, err := exec.LookPath("fish"); err == nil {
		got := runShell(t, dir, env, "fish", "-c", `the-loop completion fish | source; complete -C"the-loop standing stop "`)
		if got != "created-one\ndeclared-one\n" {
			t.Errorf("fish: %q", got)
		}
	}
	if _, err := exec.LookPath("zsh"); err == nil {
		// compadd and compdef stand in for zsh's completion system: compadd
		// prints what it is given after "-Q --".
		script := `compdef() { :; }; compadd() { shift 2; print -l -- "$@"; }; _files() { print FILES; }
source <(the-loop completion zsh)
words=(the-loop sta); CURRENT=2; _the-loop
words=(the-loop standing restart ''); CURRENT=4; _the-loop
words=(the-loop standing create ''); CURRENT=4; _the-loop`
		if got := runShell(t, dir, env, "zsh", "-f", "-c", script); got != "standing\nstart\nstatus\ncreated-one\ndeclared-one\nFILES\n" {
			t.Errorf("zsh: %q", got)
		}
	}
}

// shellWords quotes words for a bash array literal.
func shellWords(words []string) string {
	var q []string
	for _, w := range words {
		q = append(q, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}
