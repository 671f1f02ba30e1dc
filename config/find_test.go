package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFindFlag_PeeksTheConfigFlagAnywhere(t *testing.T) {
	tests := []struct {
		name string
		args []string
		path string
		rest []string
	}{
		{"none", []string{"status"}, "", []string{"status"}},
		{"long before the verb", []string{"--config", "a.yaml", "status"}, "a.yaml", []string{"status"}},
		{"long with =", []string{"--config=a.yaml", "standing", "list"}, "a.yaml", []string{"standing", "list"}},
		{"short after the verb", []string{"standing", "start", "-c", "b.yaml", "sup"}, "b.yaml", []string{"standing", "start", "sup"}},
		{"at the end", []string{"stop", "--config", "c.yaml"}, "c.yaml", []string{"stop"}},
		{"last one wins", []string{"-c", "a.yaml", "--config=b.yaml", "status"}, "b.yaml", []string{"status"}},
		{"empty with =", []string{"--config=", "status"}, "", []string{"status"}},
		{"no value left", []string{"status", "--config"}, "", []string{"status", "--config"}},
		{"after -- is positional", []string{"say", "-c", "a.yaml", "--", "-c", "x"}, "a.yaml", []string{"say", "--", "-c", "x"}},
		{"other flags kept", []string{"--format", "json", "-v", "status"}, "", []string{"--format", "json", "-v", "status"}},
		{"similar names kept", []string{"--configs", "x", "-cx"}, "", []string{"--configs", "x", "-cx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, rest := FindFlag(tt.args)
			if path != tt.path || !slices.Equal(rest, tt.rest) {
				t.Errorf("FindFlag(%q) = %q, %q; want %q, %q", tt.args, path, rest, tt.path, tt.rest)
			}
		})
	}
}

func TestResolve_FollowsTheOriginalsOrder(t *testing.T) {
	// Each case builds a cwd and a HOME, each with or without a
	// .the-loop/cli-config.yaml, and an optional env value.
	tests := []struct {
		name             string
		flag             string
		env              string
		local, home      bool
		xdg              bool // a file under $XDG_CONFIG_HOME
		localIsDirectory bool
		want             string // "flag", "env", "local", "home", "xdg" or ""
	}{
		{name: "flag wins over everything", flag: "from-flag.yaml", env: "from-env.yaml", local: true, home: true, want: "flag"},
		{name: "env wins over the files", env: "from-env.yaml", local: true, home: true, want: "env"},
		{name: "local file wins over home", local: true, home: true, want: "local"},
		{name: "home when no local file", home: true, xdg: true, want: "home"},
		{name: "a local directory is not a file", localIsDirectory: true, home: true, want: "home"},
		{name: "XDG config home after the original's places", xdg: true, want: "xdg"},
		{name: "nothing: defaults", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd, home, xdg := t.TempDir(), t.TempDir(), t.TempDir()
			t.Chdir(cwd)
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", xdg)
			t.Setenv(EnvConfig, tt.env)
			localPath := filepath.Join(cwd, ".the-loop", FileName)
			homePath := filepath.Join(home, ".the-loop", FileName)
			xdgPath := filepath.Join(xdg, "the-loop", FileName)
			if tt.xdg {
				mkfile(t, xdgPath)
			}
			if tt.local {
				mkfile(t, localPath)
			}
			if tt.localIsDirectory {
				if err := os.MkdirAll(localPath, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tt.home {
				mkfile(t, homePath)
			}
			want := map[string]string{
				"flag":  filepath.Join(cwd, tt.flag),
				"env":   filepath.Join(cwd, tt.env),
				"local": localPath,
				"home":  homePath,
				"xdg":   xdgPath,
				"":      "",
			}[tt.want]
			if got := Resolve(tt.flag); got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.flag, got, want)
			}
		})
	}
}

func TestResolve_XDGConfigHomeDefaultsToDotConfig(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("HOME", home)
	t.Setenv(EnvConfig, "")
	want := filepath.Join(home, ".config", "the-loop", FileName)
	mkfile(t, want)
	for _, xdg := range []string{"", "relative/dir"} { // unset, or not absolute: ignored
		t.Setenv("XDG_CONFIG_HOME", xdg)
		if got := Resolve(""); got != want {
			t.Errorf("XDG_CONFIG_HOME=%q: Resolve() = %q, want %q", xdg, got, want)
		}
	}
}

func TestResolve_ExpandsHomeAndKeepsAbsolutePaths(t *testing.T) {
	t.Setenv("HOME", "/home/op")
	t.Setenv(EnvConfig, "")
	if got := Resolve("~/loop.yaml"); got != "/home/op/loop.yaml" {
		t.Errorf("got %q", got)
	}
	if got := Resolve("/etc/loop.yaml"); got != "/etc/loop.yaml" {
		t.Errorf("got %q", got)
	}
}

func mkfile(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestExpandHome_OnlyALeadingTilde: "~" and "~/…" become the home
// directory; "~user", a tilde elsewhere and absolute or relative paths are
// kept as given.
func TestExpandHome_OnlyALeadingTilde(t *testing.T) {
	t.Setenv("HOME", "/home/op")
	for in, want := range map[string]string{
		"~":         "/home/op",
		"~/":        "/home/op/",
		"~/proj/a":  "/home/op/proj/a",
		"~op/proj":  "~op/proj",
		"proj/~/a":  "proj/~/a",
		"/srv/proj": "/srv/proj",
		"rel/dir":   "rel/dir",
		"":          "",
	} {
		if got := ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
