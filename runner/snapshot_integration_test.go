package runner_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// One Snapshot — one tmux call — reads the tag SpawnIn set on the session,
// as Tag does, with the screen; a session that is gone is ENOTFOUND.
func TestSnapshot_ReadsTheSessionsTagInTheSameLook(t *testing.T) {
	t.Parallel()
	socket := testkit.Tmux(t)
	r := newRunner(t, socket)
	agent := testkit.FakeAgent(t)
	tag := uuid.NewString()
	spec := loop.SpawnSpec{Argv: []string{agent.Path(), "--session-id", tag, "boot"}, Cwd: agent.Dir(), Tag: tag}
	ctx := context.Background()
	if err := r.SpawnIn(ctx, "loop-standing-look", spec); err != nil {
		t.Fatal(err)
	}
	waitReady(t, r, "loop-standing-look")
	snap, err := r.Snapshot(ctx, "loop-standing-look")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Tag(ctx, "loop-standing-look"); !ok || got != tag || snap.Tag != tag {
		t.Fatalf("Snapshot's tag %q, Tag %q (%v); want %q in both", snap.Tag, got, ok, tag)
	}
	if snap.Dead || !testkit.FakeReady(snap) {
		t.Fatalf("snapshot of a ready agent: %+v", snap)
	}
	if err := r.KillTarget(ctx, "loop-standing-look"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Snapshot(ctx, "loop-standing-look"); loop.ErrorCode(err) != loop.ENOTFOUND {
		t.Fatalf("a killed session's snapshot: %v, want ENOTFOUND", err)
	}
}
