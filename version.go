package loop

import (
	"runtime/debug"
	"strings"
)

// ReleasedVersion is the version of the newest release CHANGELOG.md
// heads (`## [0.1.0] - …`): what `--version` reports unless the build set
// another (buildVersion). A test holds it to the CHANGELOG.
const ReleasedVersion = "0.1.0"

// buildVersion is the version a release build stamps in with
// -ldflags "-X github.com/the-loop-dev/the-loop.buildVersion=1.2.3"
// (GoReleaser does); empty in any other build. It is a variable only so
// the linker can set it; nothing assigns it at run time.
var buildVersion string

// buildCommit is the commit a build stamps in (-X …buildCommit=<full
// revision>, "+dirty" appended for a modified checkout): `just build` and
// GoReleaser do, since Go records no revision in a git worktree or under
// GOFLAGS=-buildvcs=false. Empty: the build info's vcs.revision is used.
var buildCommit string

// Version is the-loop's version as `--version`, health and the MCP server
// info report it: "<version> (<commit>)". The version is the one the build
// stamped in, else ReleasedVersion; the module version Go records from the
// checkout (a pseudo-version) is not used. The commit is the stamped one,
// else the build info's vcs.revision: its first 12 hex digits, with
// "+dirty" when the checkout had uncommitted changes, or "devel" when the
// build recorded none.
func Version() string {
	var settings []debug.BuildSetting
	if info, ok := debug.ReadBuildInfo(); ok {
		settings = info.Settings
	}
	return versionOf(buildVersion, buildCommit, settings)
}

// versionOf is Version for a stamped version and commit ("" for none) and
// the build settings.
func versionOf(stamped, stampedCommit string, settings []debug.BuildSetting) string {
	version := strings.TrimPrefix(strings.TrimSpace(stamped), "v")
	if version == "" {
		version = ReleasedVersion
	}
	revision, dirty, _ := strings.Cut(strings.TrimSpace(stampedCommit), "+")
	modified := dirty == "dirty"
	for _, s := range settings {
		if stampedCommit != "" {
			break
		}
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	commit := "devel"
	if revision = strings.TrimSpace(revision); revision != "" {
		commit = revision[:min(12, len(revision))]
		if modified {
			commit += "+dirty"
		}
	}
	return version + " (" + commit + ")"
}
