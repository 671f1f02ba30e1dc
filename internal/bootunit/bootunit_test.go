package bootunit

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// spec is a fixed install: a home, a binary and a config path with a
// space, a % and a $ to show the quoting.
func spec(goos string) Spec {
	return Spec{
		GOOS:     goos,
		Home:     "/home/ada",
		UID:      501,
		Binary:   "/opt/the loop & co/bin/the-loop",
		Config:   "/home/ada/work/.the-loop/cli-config 100%.yaml",
		StateDir: "/home/ada/work/.the-loop",
		WorkDir:  "/home/ada/work",
		Path:     "/opt/the loop/bin:/usr/local/bin:/usr/bin:/bin:$HOME/x",
		EnvFile:  "/home/ada/work/.the-loop/local/service.env",
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./internal/bootunit -update` to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from its golden file (-update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestRender_SystemdGolden(t *testing.T) {
	u, err := Render(spec("linux"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "the-loop.service.golden", u.Content)
	id := ID("/home/ada/work/.the-loop")
	if u.Name != "the-loop-"+id+".service" || u.Path != "/home/ada/.config/systemd/user/"+u.Name {
		t.Fatalf("name %q path %q", u.Name, u.Path)
	}
	want := []string{"systemctl --user daemon-reload && systemctl --user enable --now " + u.Name, "loginctl enable-linger $USER"}
	if strings.Join(u.Enable, "\n") != strings.Join(want, "\n") {
		t.Fatalf("enable = %q, want %q", u.Enable, want)
	}
	if strings.Join(u.Disable[0], " ") != "systemctl --user disable --now "+u.Name {
		t.Fatalf("disable = %q", u.Disable)
	}

	s := spec("linux")
	s.ConfigHome, s.EnvFile = "/xdg", ""
	u, err = Render(s)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/xdg/systemd/user/"+u.Name {
		t.Fatalf("XDG_CONFIG_HOME not used: %q", u.Path)
	}
	if bytes.Contains(u.Content, []byte("EnvironmentFile")) {
		t.Fatalf("an EnvironmentFile without token variables:\n%s", u.Content)
	}
}

func TestRender_LaunchdGolden(t *testing.T) {
	u, err := Render(spec("darwin"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "the-loop.plist.golden", u.Content)
	label := "dev.the-loop." + ID("/home/ada/work/.the-loop")
	if u.Name != label || u.Path != "/home/ada/Library/LaunchAgents/"+label+".plist" {
		t.Fatalf("name %q path %q", u.Name, u.Path)
	}
	if len(u.Enable) != 1 || u.Enable[0] != "launchctl bootstrap gui/$(id -u) "+u.Path {
		t.Fatalf("enable = %q", u.Enable)
	}
	if strings.Join(u.Disable[0], " ") != "launchctl bootout gui/501 "+u.Path {
		t.Fatalf("disable = %q", u.Disable)
	}
	// Well-formed XML, whatever the paths hold.
	d := xml.NewDecoder(bytes.NewReader(u.Content))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the plist is not well-formed XML: %v", err)
		}
	}

	s := spec("darwin")
	s.EnvFile = ""
	u, err = Render(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(u.Content, []byte("<array>\n\t\t<string>/opt/the loop &amp; co/bin/the-loop</string>\n")) {
		t.Fatalf("without token variables the agent should run the binary itself:\n%s", u.Content)
	}
}

func TestID_StablePerStateRoot(t *testing.T) {
	a := ID("/home/ada/work/.the-loop")
	if a != ID("/home/ada/work/.the-loop/") || len(a) != 8 {
		t.Fatalf("ID not stable: %q vs %q", a, ID("/home/ada/work/.the-loop/"))
	}
	if a == ID("/home/ada/other/.the-loop") {
		t.Fatal("two state roots share an ID")
	}
}

func TestRender_Refusals(t *testing.T) {
	for name, mutate := range map[string]func(*Spec){
		"unknown system":  func(s *Spec) { s.GOOS = "plan9" },
		"relative binary": func(s *Spec) { s.Binary = "bin/the-loop" },
		"relative config": func(s *Spec) { s.Config = "cli-config.yaml" },
		"line break":      func(s *Spec) { s.Path = "/bin\n[Service]" },
	} {
		s := spec("linux")
		mutate(&s)
		if _, err := Render(s); loop.ErrorCode(err) != loop.EINVALID {
			t.Errorf("%s: err = %v, want an invalid refusal", name, err)
		}
	}
}

// TestEnvFile_ReadBackByShell: the env file is read back by /bin/sh through
// the launchd shim with every value intact, unset names are comments, and
// a value with a line break is refused without quoting it.
func TestEnvFile_ReadBackByShell(t *testing.T) {
	vals := map[string]string{"A_TOKEN": `x"y\z $HOME ` + "`id`" + ` 'q' %n`, "B_TOKEN": ""}
	lookup := func(n string) (string, bool) { v, ok := vals[n]; return v, ok }
	content, unset, err := EnvFile([]string{"A_TOKEN", "C_TOKEN", "B_TOKEN"}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if len(unset) != 1 || unset[0] != "C_TOKEN" {
		t.Fatalf("unset = %q", unset)
	}
	if !bytes.Contains(content, []byte("# C_TOKEN was not set at install")) {
		t.Fatalf("no note for the unset name:\n%s", content)
	}
	path := filepath.Join(t.TempDir(), "service.env")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", "-c", launchdShim, path, "/bin/sh", "-c",
		`printf '%s|%s|%s' "$A_TOKEN" "${B_TOKEN-unset}" "${C_TOKEN-unset}"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := vals["A_TOKEN"] + "||unset"; string(out) != want {
		t.Fatalf("the shell read %q, want %q", out, want)
	}
	// A missing env file still runs the command.
	out, err = exec.Command("/bin/sh", "-c", launchdShim, path+".missing", "echo", "ran").Output()
	if err != nil || string(out) != "ran\n" {
		t.Fatalf("missing env file: %q, %v", out, err)
	}

	vals["A_TOKEN"] = "secret-part\nsecond-line"
	_, _, err = EnvFile([]string{"A_TOKEN"}, lookup)
	if loop.ErrorCode(err) != loop.EINVALID || strings.Contains(err.Error(), "secret-part") {
		t.Fatalf("err = %v, want a refusal naming A_TOKEN without its value", err)
	}
	if !strings.Contains(err.Error(), "A_TOKEN") {
		t.Fatalf("err = %v does not name the variable", err)
	}
}
