package hearing

import (
	"fmt"
	"strings"
	"testing"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// clock is a settable clock for the service.
type clock struct{ now time.Time }

func (c *clock) read() time.Time         { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func (w *hookWorld) count(name string) int {
	return len(events(w.t, w.s, store.EventQuery{Types: []string{name}}))
}
func (w *hookWorld) limited() []loop.Event {
	return events(w.t, w.s, store.EventQuery{Types: []string{"hook.rate_limited"}})
}
func notification(msg string) map[string]any {
	return map[string]any{"hook_event_name": "Notification", "message": msg}
}

// TestHooks_AFloodOfNotificationsIsDroppedAboveTheRate: one session's
// Notification and PostToolUse hooks past 20 a second are dropped, with
// one hook.rate_limited at the first drop and at most one a minute after
// it, counting what was dropped; the rate refills with the clock.
func TestHooks_AFloodOfNotificationsIsDroppedAboveTheRate(t *testing.T) {
	w := newHookWorld(t)
	c := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	w.s.Clock = c.read
	for i := range 30 {
		w.hook(notification(fmt.Sprint("n", i)))
	}
	if n := w.count("standing.attention"); n != HookRateCount {
		t.Fatalf("%d Notifications applied in one instant, want %d", n, HookRateCount)
	}
	lim := w.limited()
	if len(lim) != 1 || fmt.Sprint(lim[0].Field("dropped")) != "1" || lim[0].Field("standing") != "supervisor" ||
		lim[0].Field("hook_event_name") != "Notification" || lim[0].Level != loop.LevelWarning {
		t.Fatalf("hook.rate_limited %+v, want one at the first drop", lim)
	}
	w.hook(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Bash"})
	if a := w.row().Activity; a == loop.ActivityWorking {
		t.Error("a PostToolUse past the rate was applied")
	}

	c.advance(time.Second) // a second refills the rate
	for i := range 25 {
		w.hook(notification(fmt.Sprint("m", i)))
	}
	if n := w.count("standing.attention"); n != 2*HookRateCount {
		t.Fatalf("%d Notifications applied after a second, want %d", n, 2*HookRateCount)
	}
	if n := len(w.limited()); n != 1 {
		t.Fatalf("%d hook.rate_limited within the minute, want 1", n)
	}

	c.advance(hookLimitedEvery)
	for i := range 21 {
		w.hook(notification(fmt.Sprint("k", i)))
	}
	lim = w.limited()
	// Dropped since the first report: 9 Notifications and a PostToolUse,
	// then 5, then this minute's first.
	if len(lim) != 2 || fmt.Sprint(lim[1].Field("dropped")) != "16" {
		t.Fatalf("hook.rate_limited %+v, want a second one counting 16 dropped", lim)
	}
}

// TestHooks_AByteFloodIsDroppedToo: past 1 MiB of payloads a second a
// Notification is dropped however few came.
func TestHooks_AByteFloodIsDroppedToo(t *testing.T) {
	w := newHookWorld(t)
	c := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	w.s.Clock = c.read
	big := strings.Repeat("x", 600<<10)
	w.hook(notification(big))
	w.hook(notification(big))
	if n := w.count("standing.attention"); n != 1 {
		t.Fatalf("%d of two 600 KiB Notifications applied in one instant, want 1", n)
	}
	c.advance(time.Second)
	w.hook(notification(big))
	if n := w.count("standing.attention"); n != 2 {
		t.Fatalf("%d applied after a second, want 2", n)
	}
}

// TestHooks_TheHooksAVerbWaitsOnAreNeverDropped: past the rate, Stop,
// UserPromptSubmit, PreToolUse, PermissionRequest and SessionStart are
// still applied, and a turn still starts and ends.
func TestHooks_TheHooksAVerbWaitsOnAreNeverDropped(t *testing.T) {
	w := newHookWorld(t)
	c := &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	w.s.Clock = c.read
	for range 2 * HookRateCount {
		w.hook(notification("flood"))
	}
	for _, ev := range []string{"Stop", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "SessionStart"} {
		for range 3 {
			if dropped, err := hearer(w.s).dropHook(loop.HookDelivery{Session: "standing:supervisor", Payload: []byte("{}")}, ev, ""); dropped || err != nil {
				t.Fatalf("%s past the rate: dropped %v (%v)", ev, dropped, err)
			}
		}
	}
	w.hook(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})
	for i := range HookRateCount + 5 {
		w.hook(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt_id": fmt.Sprint("p", i)})
		w.hook(map[string]any{"hook_event_name": "Stop", "prompt_id": fmt.Sprint("p", i), "last_assistant_message": "done"})
	}
	if n := w.count("standing.turn_ended"); n != HookRateCount+5 {
		t.Fatalf("%d turns ended past the rate, want %d", n, HookRateCount+5)
	}
	if a := w.row().Activity; a != loop.ActivityIdle {
		t.Errorf("after the last Stop: %s", a)
	}
	// A spooled payload is not limited.
	if dropped, _ := hearer(w.s).dropHook(loop.HookDelivery{Session: "standing:supervisor"}, "Notification", "0000000001"); dropped {
		t.Error("a spooled Notification was dropped")
	}
}

// TestHookLimiter_EachSessionHasItsOwnRateAndTheTrackedAreBounded.
func TestHookLimiter_EachSessionHasItsOwnRateAndTheTrackedAreBounded(t *testing.T) {
	var l hookLimiter
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for range HookRateCount {
		if ok, _, _ := l.admit("standing:a", 10, now); !ok {
			t.Fatal("a hook within the rate was dropped")
		}
	}
	if ok, report, n := l.admit("standing:a", 10, now); ok || !report || n != 1 {
		t.Fatalf("past the rate: ok %v report %v dropped %d", ok, report, n)
	}
	if ok, _, _ := l.admit("standing:b", 10, now); !ok {
		t.Fatal("another session's hook was dropped for the first's flood")
	}
	for i := range 3 * maxHookBuckets {
		l.admit(fmt.Sprint("session-", i), 10, now.Add(time.Duration(i)*time.Second))
	}
	if n := len(l.buckets); n > maxHookBuckets {
		t.Fatalf("%d sessions tracked, want at most %d", n, maxHookBuckets)
	}
	for ref, key := range map[string]string{"standing:a": "standing", "github:octo/repo#15": "work_item", "nonsense": "session"} {
		if got := hookSubject(ref); got.Key != key || (key != "standing" && got.Value != ref) {
			t.Errorf("hookSubject(%q) = %v, want the key %s", ref, got, key)
		}
	}
}
