package hearing

import (
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Hook rate limits. An agent may fire hooks faster than anyone reads them;
// of the events the-loop hears, only Notification and PostToolUse carry
// nothing a verb waits on (Stop ends a turn a say waits for,
// UserPromptSubmit starts one, PreToolUse and PermissionRequest ask for a
// decision, SessionStart moves the conversation), so only they are dropped
// when one session's live deliveries pass HookRateCount a second or
// HookRateBytes a second. The first drop, and then at most one a minute,
// appends hook.rate_limited with the count dropped since the last one.
// Spooled payloads are not limited: the spool has its own bound.

// Hook rate limits, per session.
const (
	HookRateCount = 20      // hooks a second
	HookRateBytes = 1 << 20 // payload bytes a second
	// hookLimitedEvery is how often at most hook.rate_limited is appended
	// for one session.
	hookLimitedEvery = time.Minute
	// maxHookBuckets bounds the sessions the limiter tracks: idle ones
	// are let go first.
	maxHookBuckets = 1024
)

// hookLimitable reports whether a hook event may be dropped above the rate.
func hookLimitable(event string) bool { return event == "Notification" || event == "PostToolUse" }

// hookLimiter is one token bucket of hooks and one of bytes per session.
type hookLimiter struct {
	mu      sync.Mutex
	buckets map[string]*hookBucket
}

type hookBucket struct {
	at       time.Time // when the tokens were last refilled
	hooks    float64   // tokens: hooks that may pass now
	bytes    float64   // tokens: bytes that may pass now
	dropped  int       // dropped since the last hook.rate_limited
	reported time.Time // when hook.rate_limited was last appended (zero: never)
}

// admit takes a hook of size bytes for ref at now from ref's buckets; when
// they cannot pay it is dropped, and report says hook.rate_limited is due
// now, counting dropped hooks.
func (l *hookLimiter) admit(ref string, size int, now time.Time) (ok, report bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(ref, now)
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.hooks = min(HookRateCount, b.hooks+dt*HookRateCount)
		b.bytes = min(HookRateBytes, b.bytes+dt*HookRateBytes)
		b.at = now
	}
	need := float64(min(size, HookRateBytes))
	if b.hooks >= 1 && b.bytes >= need {
		b.hooks--
		b.bytes -= need
		return true, false, 0
	}
	b.dropped++
	if !b.reported.IsZero() && now.Sub(b.reported) < hookLimitedEvery {
		return false, false, 0
	}
	dropped, b.dropped, b.reported = b.dropped, 0, now
	return false, true, dropped
}

// bucket is ref's buckets, full for a session not seen before.
func (l *hookLimiter) bucket(ref string, now time.Time) *hookBucket {
	if b, ok := l.buckets[ref]; ok {
		return b
	}
	if l.buckets == nil {
		l.buckets = map[string]*hookBucket{}
	}
	if len(l.buckets) >= maxHookBuckets {
		for k, b := range l.buckets {
			if now.Sub(b.at) >= hookLimitedEvery { // idle: full again, nothing left to report
				delete(l.buckets, k)
			}
		}
		if len(l.buckets) >= maxHookBuckets {
			clear(l.buckets)
		}
	}
	b := &hookBucket{at: now, hooks: HookRateCount, bytes: HookRateBytes}
	l.buckets[ref] = b
	return b
}

// dropHook reports whether the delivery d of a hook event is dropped above
// the rate (never a spooled one: seq names its file); a due
// hook.rate_limited is appended, and its failure returned.
func (s *Hearer) dropHook(d loop.HookDelivery, event, seq string) (bool, error) {
	if seq != "" || !hookLimitable(event) {
		return false, nil
	}
	now := s.now()
	ok, report, dropped := s.hookLimits.admit(d.Session, len(d.Payload), now)
	if ok || !report {
		return !ok, nil
	}
	return true, s.emit(s.event("hook.rate_limited", loop.LevelWarning, hookSubject(d.Session),
		loop.F("hook_event_name", event), loop.F("dropped", dropped),
		loop.F("why", "more than 20 hooks or 1 MiB of them a second: Notification and PostToolUse hooks are dropped until the rate falls; this is logged once a minute")))
}

// hookSubject is the field naming the session ref in an event: standing
// or work_item as the verbs' events name it, else session.
func hookSubject(ref string) loop.Field {
	if name, ok := loop.ParseStandingRef(ref); ok {
		return loop.F("standing", name)
	}
	if _, err := loop.ParseWorkItemRef(ref); err == nil {
		return loop.F("work_item", ref)
	}
	return loop.F("session", ref)
}
