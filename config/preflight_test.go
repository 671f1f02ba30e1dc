package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreflight_MissingCwdAndPromptFileAreErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "brief.md"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cli-config.yaml")
	body := "standingSessions:\n  enabled: true\n  sessions:\n" +
		"    - {name: good, cwd: ., promptFile: brief.md}\n" +
		"    - {name: nocwd, cwd: ./absent}\n" +
		"    - {name: noprompt, promptFile: absent.md}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	errs, warnings := cfg.Preflight()
	if len(warnings) != 0 {
		t.Errorf("warnings %v, want none", warnings)
	}
	if len(errs) != 2 {
		t.Fatalf("errors %v, want 2", errs)
	}
	mustContain(t, errs[0], "standingSessions.sessions[1].cwd: '"+filepath.Join(dir, "absent")+"' does not exist", "create the directory")
	mustContain(t, errs[1], "standingSessions.sessions[2].promptFile: '"+filepath.Join(dir, "absent.md")+"' does not exist", "fix the path")
}

func TestPreflight_WarnsOfDisabledBlockAndIgnoredKeys(t *testing.T) {
	path := writeConfig(t, "standingSessions:\n  sessions:\n    - {name: a, cwd: /}\n"+
		"webhooks: {ghWebhook: {enabled: true}}\nservice: {cors: {allowOrigins: ['x']}, port: 4999}\nrouting: {tmux: {remainOnExit: false, socketName: s}}\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	errs, warnings := cfg.Preflight()
	if len(errs) != 0 {
		t.Errorf("errors %v, want none", errs)
	}
	all := strings.Join(warnings, "\n")
	mustContain(t, all, "standingSessions.enabled: not true", "set standingSessions.enabled: true",
		"routing.tmux.remainOnExit: accepted, ignored", "service.cors: accepted, ignored", "webhooks: accepted, ignored")
	if len(warnings) != 4 {
		t.Errorf("%d warnings, want 4:\n%s", len(warnings), all)
	}
	if strings.Contains(all, "service.port") || strings.Contains(all, "socketName") {
		t.Errorf("a key this the-loop acts on is warned about:\n%s", all)
	}
}

// TestIgnoredKeys_AreDescribedAsIgnored: every ignored key is in the
// published schema, described "Accepted, ignored", and no other key is.
func TestIgnoredKeys_AreDescribedAsIgnored(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, key := range IgnoredKeys() {
		ignored[key] = true
		node := doc
		for _, part := range strings.Split(key, ".") {
			props, _ := node["properties"].(map[string]any)
			next, ok := props[part].(map[string]any)
			if !ok {
				t.Fatalf("%s: not in the schema", key)
			}
			node = next
		}
		if d, _ := node["description"].(string); !strings.HasPrefix(d, "Accepted, ignored: ") {
			t.Errorf("%s is ignored but described %q", key, d)
		}
	}
	var walk func(node map[string]any, path string, under bool)
	walk = func(node map[string]any, path string, under bool) {
		d, _ := node["description"].(string)
		if d != "" && strings.HasPrefix(d, "Accepted, ignored") != under {
			t.Errorf("%s: ignored %v, described %q", path, under, d)
		}
		props, _ := node["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				p := strings.TrimPrefix(path+"."+k, ".")
				walk(m, p, under || ignored[p])
			}
		}
		if items, ok := node["items"].(map[string]any); ok && items["description"] != nil {
			walk(items, path+"[]", under)
		}
	}
	walk(doc, "", false)
}
