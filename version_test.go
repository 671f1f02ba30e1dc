package loop

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf_NamesTheModuleVersionAndTheCommit(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "9bd8633abcdef0123456789"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	clean := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})
	tests := []struct {
		name     string
		module   string
		settings []debug.BuildSetting
		want     string
	}{
		{"tagged, clean", "v1.2.3", clean, "v1.2.3 (9bd8633abcde)"},
		{"modified checkout", "v0.0.0-20261201100200-9bd8633abcde+dirty", dirty, "v0.0.0-20261201100200-9bd8633abcde+dirty (9bd8633abcde+dirty)"},
		{"no revision recorded", "v1.2.3", nil, "v1.2.3 (devel)"},
		{"no module version", "(devel)", nil, fallbackVersion + " (devel)"},
		{"empty module version", "", rev, fallbackVersion + " (9bd8633abcde)"},
		{"short revision kept whole", "v1.0.0", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}, "v1.0.0 (abc)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.module, tt.settings); got != tt.want {
				t.Errorf("versionOf(%q, …) = %q, want %q", tt.module, got, tt.want)
			}
		})
	}
}

func TestVersion_ReadsThisBinarysBuildInfo(t *testing.T) {
	// A test binary records no module version and no revision.
	if got := Version(); got != fallbackVersion+" (devel)" {
		t.Errorf("Version() = %q", got)
	}
}
