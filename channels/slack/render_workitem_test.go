package slack

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRender_WorkItemAnnouncementAtEachVerbosity compares a work item's
// announcement with golden files (original §9.1).
func TestRender_WorkItemAnnouncementAtEachVerbosity(t *testing.T) {
	ev := WorkItemAnnouncement("github:octo/repo#5", "claude", "loop-github-octo-repo-5", "https://github.com/octo/repo/issues/5")
	for _, v := range []string{"quiet", "normal", "verbose"} {
		got := Render(ev, v)
		path := filepath.Join("testdata", "workitem-announcement."+v+".txt")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s:\n got %q\nwant %q", v, got, want)
		}
	}
}
