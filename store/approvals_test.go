package store

import (
	"fmt"
	"path/filepath"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// Approvals come back pending first, then the newest; a session's list
// holds only its own; the bucket keeps at most MaxKeptApprovals and never
// drops a pending one.
func TestApprovals_ListOrderAndBound(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "the-loop.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(a loop.Approval) {
		t.Helper()
		if err := db.Update(func(tx *Tx) error { return tx.PutApproval(&a) }); err != nil {
			t.Fatal(err)
		}
	}
	put(loop.Approval{ID: "a1", Session: "w", RequestedAt: "2026-01-01T00:00:01Z", Status: loop.ApprovalPending})
	for i := range MaxKeptApprovals + 5 {
		put(loop.Approval{ID: fmt.Sprintf("d%04d", i), Session: "v", RequestedAt: fmt.Sprintf("2026-01-02T00:%02d:%02dZ", i/60%60, i%60), Status: loop.ApprovalDenied})
	}
	var all, mine []*loop.Approval
	if err := db.View(func(tx *Tx) (err error) {
		if all, err = tx.ListApprovals(""); err != nil {
			return err
		}
		mine, err = tx.ListApprovals("w")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(all) != MaxKeptApprovals {
		t.Errorf("kept %d approvals, want %d", len(all), MaxKeptApprovals)
	}
	if all[0].ID != "a1" {
		t.Errorf("first listed %s, want the pending a1", all[0].ID)
	}
	if all[1].RequestedAt < all[2].RequestedAt {
		t.Errorf("decided ones not newest first: %s before %s", all[1].RequestedAt, all[2].RequestedAt)
	}
	if len(mine) != 1 || mine[0].ID != "a1" {
		t.Errorf("session w's list = %v, want a1 alone", mine)
	}
	var got *loop.Approval
	_ = db.View(func(tx *Tx) (err error) { got, err = tx.Approval("d0000"); return err })
	if got != nil {
		t.Errorf("the oldest decided approval d0000 was kept past the bound")
	}
}
