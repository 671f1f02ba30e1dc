package hearing

import (
	"encoding/json"
	"strings"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// An input cut at MaxApprovalInput whose text is shorter than what a post
// shows (a cut input is kept as a JSON string) is shown whole and said to
// be undecidable from Slack; a long one is cut on a character's start.
func TestApprovalPostText_ACutInputIsShownAndSaidUndecidable(t *testing.T) {
	cut, _ := json.Marshal("{\"command\": \"ls")
	short := &loop.Approval{ID: "1a2b3c4d", Session: "s", Tool: "Bash", Input: cut, InputTruncated: true}
	if got := ApprovalPostText(short); !strings.Contains(got, string(cut)+"\n```\n") || !strings.Contains(got, "decide it with `the-loop standing approvals s`") {
		t.Fatalf("post %q", got)
	}
	long, _ := json.Marshal(map[string]string{"command": strings.Repeat("é", MaxDecidableText)})
	a := &loop.Approval{ID: "1a2b3c4d", Session: "s", Tool: "Bash", Input: long}
	got := ApprovalPostText(a)
	if !strings.Contains(got, "decide it with") || !strings.Contains(got, strings.Repeat("é", MaxDecidableText/2)+"\n```") {
		t.Fatalf("post %q", got[len(got)-200:])
	}
}
