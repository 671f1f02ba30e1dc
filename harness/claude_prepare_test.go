package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// fixture is a temp HOME, an optional CLAUDE_CONFIG_DIR and a workspace dir.
type fixture struct {
	home, configDir, cwd string
	env                  map[string]string
}

func newFixture(t *testing.T, withConfigDir bool) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{home: filepath.Join(root, "home"), cwd: filepath.Join(root, "work"), env: map[string]string{}}
	for _, d := range []string{f.home, f.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if withConfigDir {
		f.configDir = filepath.Join(root, "cfg")
		f.env["CLAUDE_CONFIG_DIR"] = f.configDir
	}
	return f
}

func (f *fixture) claude(policy string) *Claude {
	return NewClaude(ClaudeOptions{
		TrustEnabled: true,
		AcceptBypass: policy,
		Env:          func(k string) string { return f.env[k] },
		Home:         f.home,
	})
}

func (f *fixture) userConfig() string {
	if f.configDir != "" {
		return filepath.Join(f.configDir, ".claude.json")
	}
	return filepath.Join(f.home, ".claude.json")
}

func (f *fixture) settings() string {
	if f.configDir != "" {
		return filepath.Join(f.configDir, "settings.json")
	}
	return filepath.Join(f.home, ".claude", "settings.json")
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "}\n") {
		t.Fatalf("%s does not end with a newline after the object: %q", path, data)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func trusted(doc map[string]any, key string) bool {
	projects, _ := doc["projects"].(map[string]any)
	entry, _ := projects[key].(map[string]any)
	return entry["hasTrustDialogAccepted"] == true && entry["hasCompletedProjectOnboarding"] == true
}

func TestPrepare_SeedsTrustForExactCwd(t *testing.T) {
	for _, withDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("CLAUDE_CONFIG_DIR=%v", withDir), func(t *testing.T) {
			f := newFixture(t, withDir)
			if err := f.claude(BypassAuto).Prepare(f.cwd, nil); err != nil {
				t.Fatal(err)
			}
			doc := readJSON(t, f.userConfig())
			if !trusted(doc, f.cwd) {
				t.Fatalf("cwd not trusted: %v", doc)
			}
			projects := doc["projects"].(map[string]any)
			if len(projects) != 1 {
				t.Fatalf("trust widened beyond the exact cwd: %v", projects)
			}
			if _, ok := doc["bypassPermissionsModeAccepted"]; ok {
				t.Fatal("bypass recorded without being asked for")
			}
			if _, err := os.Stat(f.settings()); !os.IsNotExist(err) {
				t.Fatalf("settings.json written without bypass: %v", err)
			}
			fi, err := os.Stat(f.userConfig())
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("new file mode = %o, want 600", fi.Mode().Perm())
			}
		})
	}
}

func TestPrepare_NormalisesRelativeCwd(t *testing.T) {
	f := newFixture(t, false)
	t.Chdir(filepath.Dir(f.cwd))
	if err := f.claude(BypassNever).Prepare("./x/../work/", nil); err != nil {
		t.Fatal(err)
	}
	if doc := readJSON(t, f.userConfig()); !trusted(doc, f.cwd) {
		t.Fatalf("key is not the absolute cleaned cwd: %v", doc)
	}
}

func TestPrepare_LegacyConfigJSONWins(t *testing.T) {
	for _, withDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("CLAUDE_CONFIG_DIR=%v", withDir), func(t *testing.T) {
			f := newFixture(t, withDir)
			dir := f.configDir
			if dir == "" {
				dir = filepath.Join(f.home, ".claude")
			}
			legacy := filepath.Join(dir, ".config.json")
			writeFile(t, legacy, "{}\n", 0o644)
			if err := f.claude(BypassNever).Prepare(f.cwd, nil); err != nil {
				t.Fatal(err)
			}
			if !trusted(readJSON(t, legacy), f.cwd) {
				t.Fatal(".config.json not written")
			}
			if _, err := os.Stat(f.userConfig()); !os.IsNotExist(err) {
				t.Fatalf(".claude.json written although .config.json exists: %v", err)
			}
		})
	}
}

func TestPrepare_PreservesOtherKeysAndMode(t *testing.T) {
	f := newFixture(t, false)
	other := filepath.Join(filepath.Dir(f.cwd), "other")
	existing := fmt.Sprintf(`{
  "numStartups": 12345678901234567890,
  "theme": "dark",
  "tips": {"a": [1, 2.5, null, "<&>"]},
  "projects": {
    %q: {"allowedTools": ["Bash"], "hasTrustDialogAccepted": false},
    %q: {"hasTrustDialogAccepted": true}
  }
}`, f.cwd, other)
	writeFile(t, f.userConfig(), existing, 0o640)

	if err := f.claude(BypassNever).Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(f.userConfig())
	if !strings.Contains(string(raw), `"numStartups": 12345678901234567890`) {
		t.Fatalf("large number not preserved digit for digit:\n%s", raw)
	}
	if !strings.Contains(string(raw), `"<&>"`) {
		t.Fatalf("string was HTML-escaped:\n%s", raw)
	}
	if !strings.Contains(string(raw), "\n  \"") {
		t.Fatalf("not indented by two spaces:\n%s", raw)
	}
	doc := readJSON(t, f.userConfig())
	if doc["theme"] != "dark" || !reflect.DeepEqual(doc["tips"], map[string]any{"a": []any{1.0, 2.5, nil, "<&>"}}) {
		t.Fatalf("other keys lost: %v", doc)
	}
	projects := doc["projects"].(map[string]any)
	entry := projects[f.cwd].(map[string]any)
	if !trusted(doc, f.cwd) || !reflect.DeepEqual(entry["allowedTools"], []any{"Bash"}) {
		t.Fatalf("project entry not merged: %v", entry)
	}
	if !reflect.DeepEqual(projects[other], map[string]any{"hasTrustDialogAccepted": true}) {
		t.Fatalf("another project touched: %v", projects[other])
	}
	fi, _ := os.Stat(f.userConfig())
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %o, want existing 640 kept", fi.Mode().Perm())
	}
}

func TestPrepare_WritesThroughSymlink(t *testing.T) {
	f := newFixture(t, false)
	target := filepath.Join(filepath.Dir(f.home), "dotfiles", "claude.json")
	writeFile(t, target, `{"keep": 1}`, 0o600)
	rel, err := filepath.Rel(f.home, target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, f.userConfig()); err != nil { // relative link
		t.Fatal(err)
	}
	if err := f.claude(BypassNever).Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(f.userConfig())
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced by a file: %v %v", fi.Mode(), err)
	}
	doc := readJSON(t, target)
	if !trusted(doc, f.cwd) || doc["keep"] != 1.0 {
		t.Fatalf("target not written through: %v", doc)
	}
	if _, err := os.Stat(target + ".lock"); err != nil {
		t.Fatalf("lock not taken beside the real file: %v", err)
	}
}

func TestPrepare_DanglingSymlinkCreatesTarget(t *testing.T) {
	f := newFixture(t, false)
	target := filepath.Join(filepath.Dir(f.home), "dotfiles", "claude.json")
	if err := os.Symlink(target, f.userConfig()); err != nil {
		t.Fatal(err)
	}
	if err := f.claude(BypassNever).Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	if !trusted(readJSON(t, target), f.cwd) {
		t.Fatal("dangling link's target not created")
	}
	if fi, _ := os.Lstat(f.userConfig()); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced")
	}
}

func TestPrepare_InvalidFileLeftUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":            `{"projects": {`,
		"array":               `[1, 2]`,
		"trailing data":       `{} {}`,
		"empty":               ``,
		"projects not object": `{"projects": []}`,
		"entry not object":    `{"projects": {"CWD": true}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, false)
			content = strings.ReplaceAll(content, "CWD", f.cwd)
			writeFile(t, f.userConfig(), content, 0o644)
			before, _ := os.Stat(f.userConfig())

			err := f.claude(BypassNever).Prepare(f.cwd, nil)
			if err == nil {
				t.Fatal("no error for an invalid file")
			}
			if !strings.Contains(err.Error(), f.userConfig()) || !strings.Contains(err.Error(), "left untouched") {
				t.Fatalf("error does not name the file: %v", err)
			}
			got, _ := os.ReadFile(f.userConfig())
			after, _ := os.Stat(f.userConfig())
			if string(got) != content || !os.SameFile(before, after) || after.Mode().Perm() != 0o644 {
				t.Fatalf("file touched: %q", got)
			}
		})
	}
}

func TestPrepare_InvalidUserConfigStillWritesSettings(t *testing.T) {
	f := newFixture(t, true)
	writeFile(t, f.userConfig(), "nope", 0o600)
	err := f.claude(BypassAlways).Prepare(f.cwd, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	if readJSON(t, f.settings())["skipDangerousModePermissionPrompt"] != true {
		t.Fatal("settings not written after the user config failed")
	}
}

func TestPrepare_Idempotent(t *testing.T) {
	f := newFixture(t, true)
	c := f.claude(BypassAlways)
	if err := c.Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	var before []os.FileInfo
	for _, p := range []string{f.userConfig(), f.settings()} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		before = append(before, fi)
	}
	if err := c.Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{f.userConfig(), f.settings()} {
		after, _ := os.Stat(p)
		if !os.SameFile(before[i], after) || !after.ModTime().Equal(old) {
			t.Fatalf("%s rewritten although the desired state held", p)
		}
	}
	entries, _ := os.ReadDir(f.configDir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}

func TestPrepare_RealpathKeyForSymlinkedCwd(t *testing.T) {
	f := newFixture(t, false)
	link := filepath.Join(filepath.Dir(f.cwd), "link")
	if err := os.Symlink(f.cwd, link); err != nil {
		t.Fatal(err)
	}
	if err := f.claude(BypassNever).Prepare(link, nil); err != nil {
		t.Fatal(err)
	}
	doc := readJSON(t, f.userConfig())
	real, _ := filepath.EvalSymlinks(link)
	if !trusted(doc, link) || !trusted(doc, real) {
		t.Fatalf("want both %s and %s trusted: %v", link, real, doc["projects"])
	}
	if n := len(doc["projects"].(map[string]any)); n != 2 {
		t.Fatalf("projects has %d keys, want 2", n)
	}
}

func TestPrepare_BypassPolicy(t *testing.T) {
	bypassArgs := map[string][]string{
		"skip flag":          {"--model", "opus", "--dangerously-skip-permissions"},
		"mode equals":        {"--permission-mode=bypassPermissions"},
		"mode separate":      {"--permission-mode", "bypassPermissions", "--verbose"},
		"mode other":         {"--permission-mode", "acceptEdits"},
		"mode value dangles": {"--permission-mode"},
		"no args":            nil,
	}
	asks := map[string]bool{"skip flag": true, "mode equals": true, "mode separate": true}
	for _, policy := range []string{BypassAuto, "", BypassAlways, BypassNever} {
		for name, args := range bypassArgs {
			t.Run(fmt.Sprintf("%q/%s", policy, name), func(t *testing.T) {
				f := newFixture(t, true)
				if err := f.claude(policy).Prepare(f.cwd, args); err != nil {
					t.Fatal(err)
				}
				want := policy == BypassAlways || (policy != BypassNever && asks[name])
				doc := readJSON(t, f.userConfig())
				if got := doc["bypassPermissionsModeAccepted"] == true; got != want {
					t.Fatalf("bypassPermissionsModeAccepted = %v, want %v", got, want)
				}
				if !trusted(doc, f.cwd) {
					t.Fatal("trust not written")
				}
				if !want {
					if _, err := os.Stat(f.settings()); !os.IsNotExist(err) {
						t.Fatalf("settings.json written: %v", err)
					}
					return
				}
				settings := readJSON(t, f.settings())
				if settings["skipDangerousModePermissionPrompt"] != true {
					t.Fatalf("settings = %v", settings)
				}
				for k := range settings {
					if k != "skipDangerousModePermissionPrompt" {
						t.Fatalf("unexpected settings key %q (no plugin marketplace is written)", k)
					}
				}
			})
		}
	}
}

func TestPrepare_SettingsKeepsOtherKeys(t *testing.T) {
	f := newFixture(t, false)
	writeFile(t, f.settings(), `{"enabledPlugins": {"x@y": false}, "skipDangerousModePermissionPrompt": false}`, 0o600)
	if err := f.claude(BypassAlways).Prepare(f.cwd, nil); err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, f.settings())
	want := map[string]any{"enabledPlugins": map[string]any{"x@y": false}, "skipDangerousModePermissionPrompt": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("settings = %v, want %v", got, want)
	}
}

func TestPrepare_DisabledWritesNothing(t *testing.T) {
	f := newFixture(t, false)
	c := NewClaude(ClaudeOptions{AcceptBypass: BypassAlways, Home: f.home, Env: func(string) string { return "" }})
	if err := c.Prepare(f.cwd, []string{"--dangerously-skip-permissions"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(f.home)
	if len(entries) != 0 {
		t.Fatalf("home touched: %v", entries)
	}
}

func TestPrepare_ConcurrentWritersLoseNothing(t *testing.T) {
	f := newFixture(t, false)
	c := f.claude(BypassNever)
	var dirs []string
	for i := range 16 {
		d := filepath.Join(filepath.Dir(f.cwd), fmt.Sprintf("w%02d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(dirs))
	for _, d := range dirs {
		wg.Go(func() { errs <- c.Prepare(d, nil) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	doc := readJSON(t, f.userConfig())
	for _, d := range dirs {
		if !trusted(doc, d) {
			t.Fatalf("%s lost", d)
		}
	}
}

func TestPrepare_ErrorIsInternal(t *testing.T) {
	f := newFixture(t, false)
	writeFile(t, f.userConfig(), "nope", 0o600)
	err := f.claude(BypassNever).Prepare(f.cwd, nil)
	var le *loop.Error
	if !errors.As(err, &le) || le.Code != loop.EINTERNAL {
		t.Fatalf("err = %#v, want an EINTERNAL *loop.Error", err)
	}
}
