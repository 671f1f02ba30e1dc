// Package mock holds hand-written function-field implementations of the
// root package's services, for tests of the surfaces (http, channels)
// that need neither tmux nor bbolt. A method whose function is nil
// panics, naming it: a test sets only what the code under test may call.
package mock

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
)

var (
	_ loop.StandingService    = (*StandingService)(nil)
	_ loop.WorkItemService    = (*WorkItemService)(nil)
	_ loop.EventLog           = (*EventLog)(nil)
	_ loop.EventWriter        = (*EventWriter)(nil)
	_ loop.ThreadLog          = (*ThreadLog)(nil)
	_ loop.AgentAuthenticator = (*AgentAuthenticator)(nil)
	_ loop.HookSink           = (*HookSink)(nil)
)

// StandingService is a loop.StandingService of function fields.
type StandingService struct {
	ListFn    func(ctx context.Context) ([]loop.StandingRow, error)
	GetFn     func(ctx context.Context, name string) (loop.StandingRow, error)
	CreateFn  func(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error)
	DeleteFn  func(ctx context.Context, req loop.StandingDeleteRequest) (loop.StandingControlResult, error)
	ControlFn func(ctx context.Context, req loop.StandingControlRequest) (loop.StandingControlResult, error)
	SayFn     func(ctx context.Context, req loop.StandingSayRequest) (loop.SayResult, error)
	StatusFn  func(ctx context.Context) ([]loop.StandingRow, bool, error)
	// TranscriptFn and PeekFn are the read side.
	TranscriptFn func(ctx context.Context, name string, last int) (loop.TranscriptResult, error)
	PeekFn       func(ctx context.Context, name string, lines int) (loop.PeekResult, error)
}

// List calls ListFn.
func (s *StandingService) List(ctx context.Context) ([]loop.StandingRow, error) {
	return s.ListFn(ctx)
}

// Get calls GetFn.
func (s *StandingService) Get(ctx context.Context, name string) (loop.StandingRow, error) {
	return s.GetFn(ctx, name)
}

// Create calls CreateFn.
func (s *StandingService) Create(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	return s.CreateFn(ctx, req)
}

// Delete calls DeleteFn.
func (s *StandingService) Delete(ctx context.Context, req loop.StandingDeleteRequest) (loop.StandingControlResult, error) {
	return s.DeleteFn(ctx, req)
}

// Control calls ControlFn.
func (s *StandingService) Control(ctx context.Context, req loop.StandingControlRequest) (loop.StandingControlResult, error) {
	return s.ControlFn(ctx, req)
}

// Say calls SayFn.
func (s *StandingService) Say(ctx context.Context, req loop.StandingSayRequest) (loop.SayResult, error) {
	return s.SayFn(ctx, req)
}

// Status calls StatusFn.
func (s *StandingService) Status(ctx context.Context) ([]loop.StandingRow, bool, error) {
	return s.StatusFn(ctx)
}

// Transcript calls TranscriptFn.
func (s *StandingService) Transcript(ctx context.Context, name string, last int) (loop.TranscriptResult, error) {
	return s.TranscriptFn(ctx, name, last)
}

// Peek calls PeekFn.
func (s *StandingService) Peek(ctx context.Context, name string, lines int) (loop.PeekResult, error) {
	return s.PeekFn(ctx, name, lines)
}

// WorkItemService is a loop.WorkItemService of function fields.
type WorkItemService struct {
	ListFn  func(ctx context.Context, status string) ([]loop.WorkItemRow, error)
	GetFn   func(ctx context.Context, ref string) (loop.WorkItemRow, error)
	StartFn func(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error)
	ReplyFn func(ctx context.Context, req loop.WorkItemReplyRequest) (loop.ReplyResult, error)
	CloseFn func(ctx context.Context, req loop.WorkItemCloseRequest) (loop.CloseResult, error)
}

// List calls ListFn.
func (w *WorkItemService) List(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	return w.ListFn(ctx, status)
}

// Get calls GetFn.
func (w *WorkItemService) Get(ctx context.Context, ref string) (loop.WorkItemRow, error) {
	return w.GetFn(ctx, ref)
}

// Start calls StartFn.
func (w *WorkItemService) Start(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	return w.StartFn(ctx, req)
}

// Reply calls ReplyFn.
func (w *WorkItemService) Reply(ctx context.Context, req loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
	return w.ReplyFn(ctx, req)
}

// Close calls CloseFn.
func (w *WorkItemService) Close(ctx context.Context, req loop.WorkItemCloseRequest) (loop.CloseResult, error) {
	return w.CloseFn(ctx, req)
}

// EventLog is a loop.EventLog of function fields.
type EventLog struct {
	EventsFn func(ctx context.Context, q loop.EventQuery) ([]loop.Event, error)
}

// Events calls EventsFn.
func (l *EventLog) Events(ctx context.Context, q loop.EventQuery) ([]loop.Event, error) {
	return l.EventsFn(ctx, q)
}

// EventWriter is a loop.EventWriter of function fields.
type EventWriter struct {
	NewEventFn func(name, level string, fields ...loop.Field) loop.Event
	EmitFn     func(evs ...loop.Event) error
}

// NewEvent calls NewEventFn.
func (w *EventWriter) NewEvent(name, level string, fields ...loop.Field) loop.Event {
	return w.NewEventFn(name, level, fields...)
}

// Emit calls EmitFn.
func (w *EventWriter) Emit(evs ...loop.Event) error { return w.EmitFn(evs...) }

// ThreadLog is a loop.ThreadLog of function fields.
type ThreadLog struct {
	EventWriter
	ThreadsFn        func(ctx context.Context) ([]loop.BoundThread, error)
	RecordReplyFn    func(ctx context.Context, threadTS, ts string, decide func(ref string) []loop.Event) (string, bool, error)
	PendingRepliesFn func(ctx context.Context) ([]loop.PendingReply, error)
	WaitingFn        func(ctx context.Context, thread string) (int, error)
	KeepReplyFn      func(ctx context.Context, pr loop.PendingReply, kept, full []loop.Event) (bool, error)
	TakePostsFn      func(ctx context.Context) ([]loop.OutgoingPost, error)
	ReturnPostFn     func(ctx context.Context, p loop.OutgoingPost) error
	TakeReplyFn      func(ctx context.Context, seq uint64, decide func(pr loop.PendingReply, ref string) []loop.Event) (*loop.PendingReply, string, error)
	WorkItemOpenFn   func(ctx context.Context, ref string) bool
}

// PendingReplies calls PendingRepliesFn (none kept when it is nil).
func (l *ThreadLog) PendingReplies(ctx context.Context) ([]loop.PendingReply, error) {
	if l.PendingRepliesFn == nil {
		return nil, nil
	}
	return l.PendingRepliesFn(ctx)
}

// Waiting calls WaitingFn (none waiting when it is nil).
func (l *ThreadLog) Waiting(ctx context.Context, thread string) (int, error) {
	if l.WaitingFn == nil {
		return 0, nil
	}
	return l.WaitingFn(ctx, thread)
}

// KeepReply calls KeepReplyFn.
func (l *ThreadLog) KeepReply(ctx context.Context, pr loop.PendingReply, kept, full []loop.Event) (bool, error) {
	return l.KeepReplyFn(ctx, pr, kept, full)
}

// TakePosts calls TakePostsFn (none when it is nil).
func (l *ThreadLog) TakePosts(ctx context.Context) ([]loop.OutgoingPost, error) {
	if l.TakePostsFn == nil {
		return nil, nil
	}
	return l.TakePostsFn(ctx)
}

// ReturnPost calls ReturnPostFn.
func (l *ThreadLog) ReturnPost(ctx context.Context, p loop.OutgoingPost) error {
	if l.ReturnPostFn == nil {
		return nil
	}
	return l.ReturnPostFn(ctx, p)
}

// TakeReply calls TakeReplyFn.
func (l *ThreadLog) TakeReply(ctx context.Context, seq uint64, decide func(pr loop.PendingReply, ref string) []loop.Event) (*loop.PendingReply, string, error) {
	return l.TakeReplyFn(ctx, seq, decide)
}

// WorkItemOpen calls WorkItemOpenFn.
func (l *ThreadLog) WorkItemOpen(ctx context.Context, ref string) bool {
	return l.WorkItemOpenFn(ctx, ref)
}

// Threads calls ThreadsFn.
func (l *ThreadLog) Threads(ctx context.Context) ([]loop.BoundThread, error) {
	return l.ThreadsFn(ctx)
}

// RecordReply calls RecordReplyFn.
func (l *ThreadLog) RecordReply(ctx context.Context, threadTS, ts string, decide func(ref string) []loop.Event) (string, bool, error) {
	return l.RecordReplyFn(ctx, threadTS, ts, decide)
}

// AgentAuthenticator is a loop.AgentAuthenticator of function fields.
type AgentAuthenticator struct {
	AgentForFn func(ctx context.Context, token string) (loop.AgentIdentity, bool)
}

// AgentFor calls AgentForFn.
func (a *AgentAuthenticator) AgentFor(ctx context.Context, token string) (loop.AgentIdentity, bool) {
	return a.AgentForFn(ctx, token)
}

// HookSink is a loop.HookSink of function fields.
type HookSink struct {
	ApplyHookFn func(ctx context.Context, stateRoot string, d loop.HookDelivery) error
}

// ApplyHook calls ApplyHookFn.
func (h *HookSink) ApplyHook(ctx context.Context, stateRoot string, d loop.HookDelivery) error {
	return h.ApplyHookFn(ctx, stateRoot, d)
}
