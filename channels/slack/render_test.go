package slack

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestRender_StandingAnnouncementAtEachVerbosity compares the announcement
// with golden files (original §9.1, §9.2).
func TestRender_StandingAnnouncementAtEachVerbosity(t *testing.T) {
	ev := StandingAnnouncement("supervisor", "claude", "loop-standing-supervisor")
	for _, v := range []string{"quiet", "normal", "verbose"} {
		got := Render(ev, v)
		path := filepath.Join("testdata", "announcement."+v+".txt")
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
	if Render(ev, "chatty") != Render(ev, "normal") {
		t.Error("an unknown verbosity should render as normal")
	}
}

func TestRender_QuietNamesTheURL(t *testing.T) {
	got := Render(Outbound{Type: "session.awaiting_input", WorkItem: "github:o/r#1", URL: "https://github.com/o/r/issues/1", Text: "x"}, "quiet")
	if want := "the-loop: session.awaiting_input on github:o/r#1 — https://github.com/o/r/issues/1"; got != want {
		t.Fatalf("got %q", got)
	}
}
