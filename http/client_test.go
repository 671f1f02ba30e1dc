package http

import (
	"errors"
	"path/filepath"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

func TestClient_AgainstTheService(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	c, ctx := f.client, t.Context()

	h, err := f.local.Health(ctx)
	if err != nil || h.Status != "ok" || h.Version != "test-version" || h.PID == 0 || h.StateRoot != filepath.Join(f.dir, "state") {
		t.Fatalf("health %+v %v", h, err)
	}
	res, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "", Verb: "start", AutoOnly: true})
	if err != nil || !res.OK || len(res.Sessions) != 1 || res.Sessions[0].Outcome != loop.OutcomeStarted {
		t.Fatalf("start %+v %v", res, err)
	}
	rows, err := c.Standing.List(ctx)
	if err != nil || len(rows) != 1 || !rows[0].Running {
		t.Fatalf("list %+v %v", rows, err)
	}
	row, err := c.Standing.Get(ctx, "alpha")
	if err != nil || row.Name != "alpha" || row.HarnessSessionID == "" {
		t.Fatalf("get %+v %v", row, err)
	}
	args := []string{}
	created, err := c.Standing.Create(ctx, loop.StandingCreateRequest{Name: "beta", Cwd: f.dir, HarnessArgs: &args, AutoStart: true, Start: false})
	if err != nil || !created.OK || created.Sessions[0].Status != loop.StatusStopped {
		t.Fatalf("create %+v %v", created, err)
	}
	said, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "alpha", Text: "status report, please", Actor: "ops"})
	if err != nil || !said.Delivered {
		t.Fatalf("say %+v %v", said, err)
	}
	rep, err := c.Status(ctx)
	if err != nil || len(rep.Services) != 1 || rep.Services[0].URL != f.url || len(rep.StandingSessions) != 2 {
		t.Fatalf("status %+v %v", rep, err)
	}
	deleted, err := c.Standing.Delete(ctx, loop.StandingDeleteRequest{Name: "beta"})
	if err != nil || deleted.Sessions[0].Outcome != loop.OutcomeDeleted {
		t.Fatalf("delete %+v %v", deleted, err)
	}

	evs, err := c.Events(ctx, loop.EventQuery{Types: []string{"standing.*"}, Standing: "alpha"})
	if err != nil || len(evs) < 2 {
		t.Fatalf("events %+v %v", evs, err)
	}
	for i, e := range evs {
		if e.Seq == 0 || (i > 0 && e.Seq <= evs[i-1].Seq) || e.Field("seq") != nil || e.Field("standing") != "alpha" {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	after, err := c.Events(ctx, loop.EventQuery{After: evs[0].Seq, Limit: 1, Types: []string{"standing.*"}, Standing: "alpha"})
	if err != nil || len(after) != 1 || after[0].Seq != evs[len(evs)-1].Seq {
		t.Fatalf("events after/limit: %+v %v", after, err)
	}
	said2, err := c.Events(ctx, loop.EventQuery{WorkItem: "standing:alpha", Level: "info", Since: "1h", Types: []string{"standing.said"}})
	if err != nil || len(said2) != 1 || said2[0].Field("actor") != "ops" {
		t.Fatalf("events by work item: %+v %v", said2, err)
	}

	// Refusals come back typed.
	for _, tc := range []struct {
		call func() error
		code string
	}{
		{func() error { _, err := c.Standing.Get(ctx, "nobody"); return err }, loop.ENOTFOUND},
		{func() error {
			_, err := c.Standing.Control(ctx, loop.StandingControlRequest{Name: "alpha", Verb: "detonate", AutoOnly: false})
			return err
		}, loop.EINVALID},
		{func() error { _, err := c.Standing.Create(ctx, loop.StandingCreateRequest{Name: "alpha"}); return err }, loop.EINVALID},
		{func() error {
			_, err := c.Standing.Say(ctx, loop.StandingSayRequest{Name: "nobody", Text: "hi", Actor: ""})
			return err
		}, loop.ENOTFOUND},
		{func() error { _, err := c.Events(ctx, loop.EventQuery{Level: "loud"}); return err }, loop.EINVALID},
	} {
		err := tc.call()
		var le *loop.Error
		if !errors.As(err, &le) || le.Code != tc.code || le.Message == "" {
			t.Errorf("got %v (%T), want code %s", err, err, tc.code)
		}
	}
}
