package loop

import (
	"runtime/debug"
	"strings"
)

// fallbackVersion is the version reported when the build info names none
// (a test binary, `go run`, a build outside a module checkout).
const fallbackVersion = "0.1.0-dev"

// Version is the-loop's version as `--version`, health and the MCP server
// info report it: "<module version> (<commit>)", read from the binary's
// build info. The commit is vcs.revision's first 12 hex digits with
// "+dirty" when the checkout had uncommitted changes, or "devel" when the
// build recorded no revision.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versionOf("", nil)
	}
	return versionOf(info.Main.Version, info.Settings)
}

// versionOf is Version for a given module version and build settings.
func versionOf(module string, settings []debug.BuildSetting) string {
	version := module
	if version == "" || version == "(devel)" {
		version = fallbackVersion
	}
	var revision string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	commit := "devel"
	if revision != "" {
		commit = revision[:min(12, len(revision))]
		if modified {
			commit += "+dirty"
		}
	}
	return version + " (" + strings.TrimSpace(commit) + ")"
}
