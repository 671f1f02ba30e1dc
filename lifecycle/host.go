package lifecycle

import (
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/store"
)

// host is a Service as its engine's engine.Host: every method reads the
// Service's field as it is at the call.
type host struct{ s *Service }

func (h host) Store() *store.DB { return h.s.DB }

func (h host) Runner(socket string) loop.Runner {
	if h.s.Runner == nil {
		return nil
	}
	return h.s.Runner(socket)
}

func (h host) Harness(name, session string) (loop.Harness, error) {
	return h.s.lookupHarness(name, session)
}

func (h host) LookPath(file string) (string, error) { return h.s.LookPath(file) }

func (h host) Now() time.Time { return h.s.now() }

func (h host) NewID() string { return h.s.newID() }

func (h host) ProcStart(pid int) (start uint64, ok, known bool) {
	if h.s.ProcStart == nil {
		return 0, false, false
	}
	start, ok = h.s.ProcStart(pid)
	return start, ok, true
}

func (h host) ClaimWait() time.Duration { return h.s.ClaimWait }

func (h host) HookBinary() string { return h.s.HookBinary }

func (h host) Source() string { return h.s.Source }

func (h host) Event(name, level string, fields ...loop.Field) loop.Event {
	return h.s.event(name, level, fields...)
}

func (h host) Emit(evs ...loop.Event) error { return h.s.Emit(evs...) }

func (h host) AddCredential(hash string) {
	if h.s.Redactor != nil {
		h.s.Redactor.AddCredential(hash)
	}
}
