package channels

import (
	"context"
	"reflect"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/mock"
)

// TestReadOrder_LiveThenClosedThenTombstonesNewestFirst: a cycle reads the
// threads of live sessions first, then of closed work items, then
// tombstones, each newest binding first.
func TestReadOrder_LiveThenClosedThenTombstonesNewestFirst(t *testing.T) {
	threads := []loop.BoundThread{ // oldest binding first, as ThreadLog.Threads gives them
		{ThreadTS: "1", Ref: "github:octo/repo#1", Closed: true},
		{ThreadTS: "2", Ref: "standing:alpha"},
		{ThreadTS: "3", Ref: ""},
		{ThreadTS: "4", Ref: "github:octo/repo#4"},
		{ThreadTS: "5", Ref: "github:octo/repo#5", Closed: true},
		{ThreadTS: "6", Ref: ""},
	}
	var got []string
	for _, th := range (&Poller{}).readOrder(threads) {
		got = append(got, th.ThreadTS)
	}
	if want := []string{"4", "2", "5", "1", "6", "3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read order %v, want %v", got, want)
	}
}

// TestPoll_OverAMockThreadLog: with no bound thread a cycle asks Slack
// nothing and reports nothing; a thread log that fails fails the cycle.
func TestPoll_OverAMockThreadLog(t *testing.T) {
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "xoxb-test")
	cfg := config.Default()
	cfg.Slack.Enabled = true
	cfg.Slack.APIURL = "http://127.0.0.1:1" // never asked
	var fail error
	p := &Poller{Threads: &mock.ThreadLog{ThreadsFn: func(context.Context) ([]loop.BoundThread, error) { return nil, fail }}}
	if sum, err := p.Poll(context.Background(), cfg); err != nil || sum != (loop.PollSummary{}) {
		t.Fatalf("no threads: %+v %v", sum, err)
	}
	fail = loop.Internal("the store is gone")
	if _, err := p.Poll(context.Background(), cfg); loop.ErrorMessage(err) != "the store is gone" {
		t.Fatalf("a failing thread log: %v", err)
	}
}
