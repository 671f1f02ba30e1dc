package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// fakeAnnouncer stands in for the Slack bot (a process boundary): it
// records every announcement and answers with a new ts, or fails.
type fakeAnnouncer struct {
	mu    sync.Mutex
	calls []loop.Announcement
	err   error
	empty bool // answer no thread
}

func (f *fakeAnnouncer) Announce(_ context.Context, _ *config.Config, a loop.Announcement) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, a)
	if f.err != nil {
		return "", f.err
	}
	if f.empty {
		return "", nil
	}
	return fmt.Sprintf("1700000000.%06d", len(f.calls)*100), nil
}

func (f *fakeAnnouncer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// slackConfig enables channels.slack (central channel CCENTRAL) and the
// entries' slack surface.
func slackConfig(t *testing.T, names ...string) *config.Config {
	cfg := testConfig(t, names...)
	cfg.Slack.Enabled = true
	cfg.Slack.Channel = "CCENTRAL"
	for i := range cfg.Standing.Sessions {
		cfg.Standing.Sessions[i].SlackEnabled = true
	}
	return cfg
}

// threads returns the bound threads with their cursors, oldest binding
// first, as the store holds them.
func threads(t *testing.T, s *Service) []loop.BoundThread {
	t.Helper()
	var th []loop.BoundThread
	if err := s.DB.View(func(tx *store.Tx) error {
		all, err := tx.Threads()
		for _, b := range all {
			th = append(th, loop.BoundThread{ThreadTS: b.ThreadTS, Ref: b.Ref, Channel: b.Channel, Cursor: tx.Cursor(b.ThreadTS)})
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return th
}

func TestStart_AnnouncesOnceInItsOwnChannelAndBindsTheThread(t *testing.T) {
	r := newFakeRunner()
	s := newTestService(t, r)
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	cfg := slackConfig(t, "supervisor")
	cfg.Standing.Sessions[0].SlackChannel = "COWN"
	ctx := context.Background()

	res, err := s.StartStanding(ctx, cfg, "supervisor", false)
	if err != nil || !res.OK {
		t.Fatalf("start %+v %v", res, err)
	}
	if ann.count() != 1 {
		t.Fatalf("announcements %d", ann.count())
	}
	if a := ann.calls[0]; a.Channel != "COWN" || a.Name != "supervisor" || a.Harness != "claude" || a.Target != "loop-standing-supervisor" {
		t.Fatalf("announcement %+v", a)
	}
	row := res.Sessions[0]
	if row.SlackThread != "1700000000.000100" || row.SlackChannel != "COWN" || row.Outcome != "started" {
		t.Fatalf("row %+v", row)
	}
	th := threads(t, s)
	if len(th) != 1 || th[0].ThreadTS != "1700000000.000100" || th[0].Ref != "standing:supervisor" || th[0].Channel != "COWN" || th[0].Cursor != th[0].ThreadTS {
		t.Fatalf("bindings %+v", th)
	}
	evs := events(t, s, store.EventQuery{})
	if got := eventNames(evs); !slices.Equal(got, []string{"standing.started", "standing.announced"}) {
		t.Fatalf("events %v", got)
	}
	if e := evs[1]; e.Field("standing") != "supervisor" || e.Field("channel") != "COWN" || e.Field("thread") != "1700000000.000100" {
		t.Fatalf("standing.announced %+v (the channel is the id, decisions D18)", e.Fields)
	}

	// Start, stop, start: the thread is kept, nothing is posted again.
	if _, err := s.StopStanding(ctx, cfg, "supervisor"); err != nil {
		t.Fatal(err)
	}
	res, _ = s.StartStanding(ctx, cfg, "supervisor", false)
	if res.Sessions[0].Outcome != "resumed" || res.Sessions[0].SlackThread != "1700000000.000100" || ann.count() != 1 {
		t.Fatalf("restart %+v announcements %d", res.Sessions[0], ann.count())
	}
	if len(threads(t, s)) != 1 {
		t.Fatal("a restart bound another thread")
	}
}

func TestStart_AnnouncesInTheCentralChannelWithoutItsOwn(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	res, _ := s.StartStanding(context.Background(), slackConfig(t, "supervisor"), "supervisor", false)
	if ann.count() != 1 || ann.calls[0].Channel != "CCENTRAL" || res.Sessions[0].SlackChannel != "CCENTRAL" {
		t.Fatalf("announcements %+v row %+v", ann.calls, res.Sessions[0])
	}
}

func TestStart_AnnounceFailureNeverStopsTheSession(t *testing.T) {
	for _, c := range []struct {
		name string
		ann  *fakeAnnouncer
		want string
	}{
		{"post fails", &fakeAnnouncer{err: loop.Internal("slack: post failed: channel_not_found")}, "slack: post failed: channel_not_found"},
		{"no thread", &fakeAnnouncer{empty: true}, "the channel returned no thread"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestService(t, newFakeRunner())
			s.Announcer = c.ann
			res, err := s.StartStanding(context.Background(), slackConfig(t, "supervisor"), "supervisor", false)
			row := res.Sessions[0]
			if err != nil || !res.OK || row.Outcome != "started" || !row.Running || row.SlackThread != "" {
				t.Fatalf("start %+v %v", res, err)
			}
			evs := events(t, s, store.EventQuery{})
			if got := eventNames(evs); !slices.Equal(got, []string{"standing.started", "standing.announce_failed"}) {
				t.Fatalf("events %v", got)
			}
			if e := evs[1]; e.Level != "warning" || e.Field("standing") != "supervisor" || e.Field("error") != c.want {
				t.Fatalf("announce_failed %+v %+v", e, e.Fields)
			}
			if len(threads(t, s)) != 0 {
				t.Fatal("a failed announcement bound a thread")
			}
		})
	}
}

func TestStart_SlackDisabledAnnouncesNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"channels.slack disabled", func(c *config.Config) { c.Slack.Enabled = false }},
		{"the entry's slack disabled", func(c *config.Config) { c.Standing.Sessions[0].SlackEnabled = false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestService(t, newFakeRunner())
			ann := &fakeAnnouncer{}
			s.Announcer = ann
			cfg := slackConfig(t, "supervisor")
			c.edit(cfg)
			res, _ := s.StartStanding(context.Background(), cfg, "supervisor", false)
			if !res.OK || ann.count() != 0 {
				t.Fatalf("start %+v announcements %d", res, ann.count())
			}
			if got := eventNames(events(t, s, store.EventQuery{})); !slices.Equal(got, []string{"standing.started"}) {
				t.Fatalf("events %v", got)
			}
		})
	}
}

func TestDelete_UnbindsTheThreadSoARecreatedNameGetsANewOne(t *testing.T) {
	s := newTestService(t, newFakeRunner())
	ann := &fakeAnnouncer{}
	s.Announcer = ann
	cfg := slackConfig(t)
	ctx := context.Background()
	req := loop.StandingCreateRequest{Name: "helper", Cwd: t.TempDir(), SlackEnabled: true, Start: true}
	if res, err := s.CreateStanding(ctx, cfg, req); err != nil || !res.OK {
		t.Fatalf("create %+v %v", res, err)
	}
	first := threads(t, s)
	if len(first) != 1 {
		t.Fatalf("bindings %+v", first)
	}
	if res, err := s.DeleteStanding(ctx, cfg, "helper"); err != nil || !res.OK {
		t.Fatalf("delete %+v %v", res, err)
	}
	if th := threads(t, s); len(th) != 1 || th[0].Ref != "" {
		t.Fatalf("delete left a binding, not a tombstone: %+v", th)
	}
	if res, err := s.CreateStanding(ctx, cfg, req); err != nil || !res.OK {
		t.Fatalf("re-create %+v %v", res, err)
	}
	var second []loop.BoundThread
	for _, th := range threads(t, s) {
		if th.Ref == "standing:helper" {
			second = append(second, th)
		}
	}
	if ann.count() != 2 || len(second) != 1 || second[0].ThreadTS == first[0].ThreadTS {
		t.Fatalf("announcements %d, bindings %+v (first %+v)", ann.count(), second, first)
	}
}
