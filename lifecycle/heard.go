package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
)

// Hearing is what the verbs need of the hearing room (package hearing,
// which applies the agents' hooks to the records; cmd/the-loop wires it):
// a list or a say first applies the hooks spooled while the store was
// locked, and a say waiting on a hook is woken when this process applies
// one.
type Hearing interface {
	// ApplyHook applies one delivery (the service's hook route; the hook
	// command's own when the service is down).
	loop.HookSink
	// ApplySpool applies the hook payloads spooled under stateRoot, in
	// order. EINVALID when the spool is refused (another user may write
	// it).
	ApplySpool(ctx context.Context, stateRoot string) error
	// Heard returns a channel closed when this process next applies a
	// hook.
	Heard() <-chan struct{}
}

// applySpool is s.Hearing's ApplySpool (nil without a hearing room: nothing
// is spooled that this process could apply).
func (s *Service) applySpool(ctx context.Context, stateRoot string) error {
	if s.Hearing == nil {
		return nil
	}
	return s.Hearing.ApplySpool(ctx, stateRoot)
}

// heardCh is s.Hearing's Heard (nil without a hearing room: a say then
// looks on its own, every poll).
func (s *Service) heardCh() <-chan struct{} {
	if s.Hearing == nil {
		return nil
	}
	return s.Hearing.Heard()
}

func (k standingKind) Hearing(rec *loop.StandingRecord) *loop.Hearing { return &rec.Hearing }

func (k standingKind) SessionRef() string { return loop.StandingRef(k.name) }

func (k workItemKind) Hearing(rec *loop.WorkItemRecord) *loop.Hearing { return &rec.Hearing }

func (k workItemKind) SessionRef() string { return k.ref.String() }
