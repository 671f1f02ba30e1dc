package bootunit

import (
	"os"
	"strings"
	"testing"
)

// settings is a unit file's Key=value lines by section ("Service.Restart").
func settings(text string) map[string]string {
	out := map[string]string{}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, _ := strings.Cut(line, "=")
			out[section+"."+k] = v
		}
	}
	return out
}

// TestPackagedUnit_RunsAsTheInstalledUnitDoes: the systemd user unit the
// packages ship (packaging/systemd/the-loop.service) restarts, stops and
// installs as the unit `the-loop service install` writes, and runs the
// packaged binary's serve.
func TestPackagedUnit_RunsAsTheInstalledUnitDoes(t *testing.T) {
	data, err := os.ReadFile("../../packaging/systemd/the-loop.service")
	if err != nil {
		t.Fatal(err)
	}
	packaged := settings(string(data))
	u, err := Render(Spec{GOOS: "linux", Home: "/home/op", UID: 1000, Binary: "/usr/bin/the-loop",
		Config: "/home/op/.the-loop/cli-config.yaml", StateDir: "/home/op/.the-loop/state", WorkDir: "/home/op", Path: "/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	written := settings(string(u.Content))
	for _, k := range []string{"Service.Type", "Service.Restart", "Service.RestartSec", "Service.KillMode", "Install.WantedBy"} {
		if packaged[k] == "" || packaged[k] != written[k] {
			t.Errorf("%s: packaged %q, the-loop service install writes %q", k, packaged[k], written[k])
		}
	}
	if got := packaged["Service.ExecStart"]; got != "/usr/bin/the-loop serve" {
		t.Errorf("ExecStart=%s, want the packaged binary's serve", got)
	}
}
