package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoad_RelativePathsResolveAgainstTheProjectDir: the same
// config used from another directory sees the same store and directories.
// <proj>/.the-loop/cli-config.yaml resolves against <proj>; any other file
// against its own directory; harnessArgs pass verbatim.
func TestLoad_RelativePathsResolveAgainstTheProjectDir(t *testing.T) {
	proj := t.TempDir()
	body := "routing:\n  spawnWorkdir: work\n  harnessArgs: {claude: [--add-dir, ./x]}\n" +
		"standingSessions:\n  sessions:\n    - name: a\n      cwd: sub\n      promptFile: briefs/a.md\n    - name: b\n"
	inFolder := filepath.Join(proj, ".the-loop", FileName)
	elsewhere := filepath.Join(proj, "conf", "my.yaml")
	for _, p := range []string{inFolder, elsewhere} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(t.TempDir()) // another working directory
	cwd, _ := os.Getwd()

	for path, base := range map[string]string{inFolder: proj, elsewhere: filepath.Join(proj, "conf")} {
		strict, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, cfg := range []*Config{strict, LoadTolerant(path)} {
			if cfg.ProjectDir != base || cfg.StateDir() != filepath.Join(base, ".the-loop") {
				t.Errorf("%s: ProjectDir %q, StateDir %q; want %s", path, cfg.ProjectDir, cfg.StateDir(), base)
			}
			if cfg.CwdStateDir() != filepath.Join(cwd, ".the-loop") {
				t.Errorf("%s: CwdStateDir %q", path, cfg.CwdStateDir())
			}
			if cfg.Routing.SpawnWorkdir != filepath.Join(base, "work") {
				t.Errorf("%s: spawnWorkdir %q", path, cfg.Routing.SpawnWorkdir)
			}
			a, _ := cfg.Standing.Get("a")
			b, _ := cfg.Standing.Get("b")
			if a.Cwd != filepath.Join(base, "sub") || a.PromptFile != filepath.Join(base, "briefs", "a.md") || b.Cwd != filepath.Join(base, "work") || b.PromptFile != "" {
				t.Errorf("%s: a %+v, b %+v", path, a, b)
			}
			if want := []string{"--add-dir", "./x"}; !slices.Equal(a.HarnessArgs, want) || !slices.Equal(cfg.Routing.HarnessArgs["claude"], want) {
				t.Errorf("%s: harnessArgs %q, want them verbatim", path, a.HarnessArgs)
			}
		}
	}

	// From the project directory the old and the new place agree.
	t.Chdir(proj)
	if cfg, _ := Load(inFolder); cfg.CwdStateDir() != "" {
		t.Errorf("run from the project: CwdStateDir %q, want none", cfg.CwdStateDir())
	}
	// No config file: the working directory, as before.
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ProjectDir != "" || cfg.StateDir() != filepath.Join(proj, ".the-loop") || cfg.CwdStateDir() != "" || cfg.Routing.SpawnWorkdir != "." {
		t.Errorf("no file: ProjectDir %q, StateDir %q, CwdStateDir %q, spawnWorkdir %q", cfg.ProjectDir, cfg.StateDir(), cfg.CwdStateDir(), cfg.Routing.SpawnWorkdir)
	}
	// An absolute state.root is where it says, from anywhere.
	abs := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(elsewhere, []byte("state: {root: "+abs+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := Load(elsewhere); cfg.StateDir() != abs || cfg.CwdStateDir() != "" {
		t.Errorf("absolute root: StateDir %q, CwdStateDir %q", cfg.StateDir(), cfg.CwdStateDir())
	}
}
