package loop

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestVersionOf_OneVersionAndOneCommit(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "9bd8633abcdef0123456789"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	clean := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})
	tests := []struct {
		name     string
		stamped  string
		commit   string
		settings []debug.BuildSetting
		want     string
	}{
		{"stamped, clean", "1.2.3", "", clean, "1.2.3 (9bd8633abcde)"},
		{"stamped with a v", "v1.2.3", "", clean, "1.2.3 (9bd8633abcde)"},
		{"unstamped, modified checkout", "", "", dirty, ReleasedVersion + " (9bd8633abcde+dirty)"},
		{"no revision recorded", "1.2.3", "", nil, "1.2.3 (devel)"},
		{"nothing stamped, nothing recorded", "", "", nil, ReleasedVersion + " (devel)"},
		{"short revision kept whole", "1.0.0", "", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "1.0.0 (abc)"},
		{"stamped commit", "", "0123456789abcdef0123", nil, ReleasedVersion + " (0123456789ab)"},
		{"stamped commit, dirty", "", "0123456789abcdef0123+dirty", nil, ReleasedVersion + " (0123456789ab+dirty)"},
		{"stamped commit wins over the build info", "1.2.3", "0123456789abcdef0123", dirty, "1.2.3 (0123456789ab)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.stamped, tt.commit, tt.settings); got != tt.want {
				t.Errorf("versionOf(%q, …) = %q, want %q", tt.stamped, got, tt.want)
			}
		})
	}
}

func TestVersion_ReadsThisBinarysBuildInfo(t *testing.T) {
	// A test binary has nothing stamped and records no revision.
	if got := Version(); got != ReleasedVersion+" (devel)" {
		t.Errorf("Version() = %q", got)
	}
}

// TestReleasedVersion_IsTheChangelogsNewestRelease: the version an
// unstamped build reports is the newest release heading of CHANGELOG.md.
func TestReleasedVersion_IsTheChangelogsNewestRelease(t *testing.T) {
	data, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+[^\]]*)\]`).FindSubmatch(data)
	if m == nil {
		t.Fatal("CHANGELOG.md has no release heading (## [x.y.z] - date)")
	}
	if string(m[1]) != ReleasedVersion {
		t.Errorf("ReleasedVersion is %q, the CHANGELOG's newest release is %q", ReleasedVersion, m[1])
	}
}
