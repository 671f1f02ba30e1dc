package harness

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCheckTrustDir_OnlyAProjectOfTheUsersOwn(t *testing.T) {
	uid := os.Geteuid()
	home := t.TempDir()
	project := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	if err := CheckTrustDir(project, home, uid); err != nil {
		t.Fatalf("a project of one's own refused: %v", err)
	}
	for dir, why := range map[string]string{"/": "root directory", home: "home directory", link: "root directory", "/tmp": "writable by group or others"} {
		if err := CheckTrustDir(dir, home, uid); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", dir, err, why)
		}
	}
	if err := CheckTrustDir(project, home, uid+1); err == nil || !strings.Contains(err.Error(), "not to you") {
		t.Errorf("a directory another uid owns: %v", err)
	}
	// A umask of 002 leaves a checkout writable by its owner's own
	// user-private group: that is the owner's.
	upg := t.TempDir()
	if err := os.Chmod(upg, 0o775); err != nil {
		t.Fatal(err)
	}
	if st, ok := statOf(t, upg); ok && userPrivateGroup(st.Uid, st.Gid) {
		if err := CheckTrustDir(upg, home, uid); err != nil {
			t.Errorf("a directory writable by the owner's user-private group: %v", err)
		}
	}
	if uid == 0 {
		if err := os.Chown(upg, -1, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckTrustDir(upg, home, uid); err == nil || !strings.Contains(err.Error(), "writable by group") {
			t.Errorf("a directory another group may write: %v", err)
		}
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckTrustDir(other, home, uid); err == nil || !strings.Contains(err.Error(), "uid 65534") && !strings.Contains(err.Error(), "nobody") {
			t.Errorf("a directory nobody owns: %v", err)
		}
	}
}

func TestSeedTrust_UnseedRemovesOnlyWhatSeedAdded(t *testing.T) {
	home := t.TempDir()
	env := func(string) string { return "" }
	mine, theirs := t.TempDir(), t.TempDir()
	codexCfg := filepath.Join(home, ".codex", "config.toml")
	geminiCfg := filepath.Join(home, ".gemini", "trustedFolders.json")
	for path, content := range map[string]string{
		codexCfg:                            "# the operator's\n[projects." + TOMLQuote(theirs) + "]\ntrust_level = \"trusted\"\n",
		geminiCfg:                           `{"` + theirs + `": "TRUST_FOLDER"}`,
		filepath.Join(home, ".claude.json"): `{"projects": {"` + theirs + `": {"hasTrustDialogAccepted": true}}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seeders := []TrustSeeder{
		NewClaude(ClaudeOptions{TrustEnabled: true, Env: env, Home: home}),
		NewCodex(CodexOptions{TrustEnabled: true, Env: env, Home: home}),
		NewGemini(GeminiOptions{TrustEnabled: true, Env: env, Home: home}),
	}
	for _, s := range seeders {
		added, err := s.SeedTrust(mine, nil)
		if err != nil || len(added) != 1 || added[0] != mine {
			t.Fatalf("%T seeding %s: added %v, %v", s, mine, added, err)
		}
		if added, err := s.SeedTrust(theirs, nil); err != nil || len(added) != 0 {
			t.Fatalf("%T seeding the operator's %s: added %v, %v", s, theirs, added, err)
		}
		if err := s.UnseedTrust([]string{mine}); err != nil {
			t.Fatalf("%T unseeding: %v", s, err)
		}
	}
	codex := readTOMLFile(t, codexCfg)
	if codexTrustOf(codex, mine) != nil || codexTrustOf(codex, theirs) != "trusted" {
		t.Fatalf("codex config after unseed: %v", codex)
	}
	if data, _ := os.ReadFile(codexCfg); !strings.HasPrefix(string(data), "# the operator's\n") {
		t.Fatalf("codex config lost the operator's layout: %q", data)
	}
	for _, path := range []string{geminiCfg, filepath.Join(home, ".claude.json")} {
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), theirs) {
			t.Fatalf("%s lost the operator's entry: %s", path, data)
		}
	}
	if data, _ := os.ReadFile(geminiCfg); strings.Contains(string(data), mine) {
		t.Fatalf("gemini kept the seeded entry: %s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(home, ".claude.json")); strings.Count(string(data), "hasTrustDialogAccepted") != 1 {
		t.Fatalf("claude kept the seeded trust: %s", data)
	}
}

func statOf(t *testing.T, path string) (*syscall.Stat_t, bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}
