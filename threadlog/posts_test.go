package threadlog_test

import (
	"context"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/threadlog"
)

func putStanding(t *testing.T, l *threadlog.Log, rec *loop.StandingRecord) {
	t.Helper()
	if err := l.DB.Update(func(tx *store.Tx) error { return tx.PutStanding(rec) }); err != nil {
		t.Fatal(err)
	}
}

func outbox(t *testing.T, l *threadlog.Log, name string) []loop.OutgoingPost {
	t.Helper()
	var out []loop.OutgoingPost
	if err := l.DB.View(func(tx *store.Tx) error {
		rec, err := tx.Standing(name)
		if rec != nil {
			out = rec.Outbox
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTakePosts_TakesEveryOutboxWithItsThreadAndEmptiesIt: the posts of a
// session with a thread come out addressed to it; those of a session with
// no thread are dropped; both outboxes are empty after.
func TestTakePosts_TakesEveryOutboxWithItsThreadAndEmptiesIt(t *testing.T) {
	l := newTestLog(t)
	ctx := context.Background()
	if posts, err := l.TakePosts(ctx); err != nil || posts != nil {
		t.Fatalf("no outbox: %+v %v", posts, err)
	}
	a := &loop.StandingRecord{Name: "a", Status: loop.StatusRunning, SlackChannel: "C1", SlackThread: "1700000000.000100"}
	a.Outbox = []loop.OutgoingPost{{Kind: loop.PostAnswer, Text: "one"}, {Kind: loop.PostAttention, Text: "two"}}
	b := &loop.StandingRecord{Name: "b", Status: loop.StatusRunning}
	b.Outbox = []loop.OutgoingPost{{Kind: loop.PostAnswer, Text: "lost"}}
	putStanding(t, l, a)
	putStanding(t, l, b)

	posts, err := l.TakePosts(ctx)
	if err != nil || len(posts) != 2 {
		t.Fatalf("posts %+v %v", posts, err)
	}
	for i, text := range []string{"one", "two"} {
		if p := posts[i]; p.Text != text || p.Standing != "a" || p.Channel != "C1" || p.Thread != "1700000000.000100" {
			t.Fatalf("post %d: %+v", i, p)
		}
	}
	if len(outbox(t, l, "a")) != 0 || len(outbox(t, l, "b")) != 0 {
		t.Fatalf("outboxes left: %+v %+v", outbox(t, l, "a"), outbox(t, l, "b"))
	}
	if posts, err := l.TakePosts(ctx); err != nil || posts != nil {
		t.Fatalf("taken twice: %+v %v", posts, err)
	}
}

// TestReturnPost_GoesBackFirstUntilItsLastAttempt: a failed post goes back
// to the head of its session's outbox, its attempts counted, until the
// fifth; a post whose session moved to another thread is dropped.
func TestReturnPost_GoesBackFirstUntilItsLastAttempt(t *testing.T) {
	l := newTestLog(t)
	ctx := context.Background()
	a := &loop.StandingRecord{Name: "a", Status: loop.StatusRunning, SlackChannel: "C1", SlackThread: "1700000000.000100"}
	a.Outbox = []loop.OutgoingPost{{Kind: loop.PostAnswer, Text: "later"}}
	putStanding(t, l, a)

	failed := loop.OutgoingPost{Kind: loop.PostAnswer, Text: "failed", Standing: "a", Channel: "C1", Thread: "1700000000.000100"}
	for attempt := 1; attempt < 5; attempt++ {
		if err := l.ReturnPost(ctx, failed); err != nil {
			t.Fatal(err)
		}
		box := outbox(t, l, "a")
		if len(box) != 2 || box[0].Text != "failed" || box[0].Attempts != attempt || box[0].Standing != "" || box[0].Thread != "" {
			t.Fatalf("attempt %d: outbox %+v", attempt, box)
		}
		a.Outbox = a.Outbox[:1]
		putStanding(t, l, a)
		failed.Attempts = attempt
	}
	if err := l.ReturnPost(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if box := outbox(t, l, "a"); len(box) != 1 || box[0].Text != "later" {
		t.Fatalf("the fifth failure is kept: %+v", box)
	}

	failed.Attempts, failed.Thread = 0, "1600000000.000100"
	if err := l.ReturnPost(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if box := outbox(t, l, "a"); len(box) != 1 {
		t.Fatalf("a post of another thread came back: %+v", box)
	}
}
