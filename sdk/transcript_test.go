package sdk_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/sdk"
)

// TestStanding_TranscriptAndPeek: the SDK shows what was said to an agent
// and what it answered, and its screen.
func TestStanding_TranscriptAndPeek(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir()) // the service's, so its agents'
	s := serve(t, "alpha")
	c, ctx := sdk.New(s.url, sdk.WithStateRoot(s.root)), t.Context()
	if res, err := c.Standing.Control(ctx, loop.StandingControlRequest{Verb: loop.VerbStart, AutoOnly: true}); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	read := func() []sdk.TranscriptEntry {
		res, err := c.Standing.Transcript(ctx, "alpha", 0)
		if err != nil || res.Name != "alpha" || res.Entries == nil {
			t.Fatalf("transcript: %+v %v", res, err)
		}
		return res.Entries
	}
	testkit.Eventually(t, func() bool { return len(read()) >= 2 }, 10*time.Second, "the boot turn's answer")
	if said, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "hello from the SDK", Actor: "sdk"}); err != nil || !said.Delivered {
		t.Fatalf("say %+v %v", said, err)
	}
	testkit.Eventually(t, func() bool { return len(read()) >= 4 }, 10*time.Second, "the say's answer: %+v", read())
	es := read()
	framed := "Message from your operator (sdk) to standing session `alpha`:\n\nhello from the SDK"
	if len(es) != 4 || !strings.Contains(es[0].Text, "You are **alpha**") || es[2].Role != loop.RoleUser || es[2].Text != framed ||
		es[3].Role != loop.RoleAssistant || es[3].Text != "fake answer to: "+framed || es[3].Usage == nil {
		t.Fatalf("transcript %+v", es)
	}
	if last, err := c.Standing.Transcript(ctx, "alpha", 1); err != nil || len(last.Entries) != 1 || last.Entries[0].Text != es[3].Text {
		t.Fatalf("last 1: %+v %v", last, err)
	}
	peek, err := c.Standing.Peek(ctx, "alpha", 0)
	if err != nil || !peek.Running || !strings.Contains(strings.Join(peek.Lines, "\n"), "fake answer to: Message from your operator (sdk)") {
		t.Fatalf("peek %+v %v", peek, err)
	}
	if _, err := c.Standing.Transcript(ctx, "nobody", 0); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("an unknown name: %v", err)
	}
	if _, err := c.Standing.Transcript(ctx, "alpha", 5000); !errors.Is(err, sdk.ErrInvalid) {
		t.Fatalf("too many entries: %v", err)
	}
}
