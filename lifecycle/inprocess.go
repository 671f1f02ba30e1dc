package lifecycle

import (
	"context"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// The in-process implementations of the root package's services: each
// holds the Service and the config source (config.Holder.Current in the
// service, a fixed config in a one-shot CLI verb), asked once per call.
var (
	_ loop.StandingService = StandingVerbs{}
	_ loop.WorkItemService = WorkItemVerbs{}
	_ loop.EventLog        = (*Service)(nil)
)

// StandingVerbs is loop.StandingService run in this process.
type StandingVerbs struct {
	S      *Service
	Config func() *config.Config
}

// Standing returns the standing verbs under the config config returns.
func (s *Service) Standing(config func() *config.Config) StandingVerbs {
	return StandingVerbs{S: s, Config: config}
}

// List is Service.ListStanding.
func (v StandingVerbs) List(ctx context.Context) ([]loop.StandingRow, error) {
	return v.S.ListStanding(ctx, v.Config())
}

// Get is Service.GetStanding.
func (v StandingVerbs) Get(ctx context.Context, name string) (loop.StandingRow, error) {
	return v.S.GetStanding(ctx, v.Config(), name)
}

// Create is Service.CreateStanding.
func (v StandingVerbs) Create(ctx context.Context, req loop.StandingCreateRequest) (loop.StandingControlResult, error) {
	return v.S.CreateStanding(ctx, v.Config(), req)
}

// Delete is Service.DeleteStanding.
func (v StandingVerbs) Delete(ctx context.Context, req loop.StandingDeleteRequest) (loop.StandingControlResult, error) {
	return v.S.DeleteStanding(ctx, v.Config(), req.Name)
}

// Control is Service.ControlStanding.
func (v StandingVerbs) Control(ctx context.Context, req loop.StandingControlRequest) (loop.StandingControlResult, error) {
	return v.S.ControlStanding(ctx, v.Config(), req.Name, req.Verb, req.AutoOnly)
}

// Say is Service.SayStanding.
func (v StandingVerbs) Say(ctx context.Context, req loop.StandingSayRequest) (loop.SayResult, error) {
	return v.S.Say(ctx, v.Config(), req)
}

// Status is Service.StandingStatus.
func (v StandingVerbs) Status(ctx context.Context) ([]loop.StandingRow, bool, error) {
	rows, ok := v.S.StandingStatus(ctx, v.Config())
	return rows, ok, nil
}

// Transcript is Service.TranscriptStanding.
func (v StandingVerbs) Transcript(ctx context.Context, name string, last int) (loop.TranscriptResult, error) {
	return v.S.TranscriptStanding(ctx, v.Config(), name, last)
}

// Peek is Service.PeekStanding.
func (v StandingVerbs) Peek(ctx context.Context, name string, lines int) (loop.PeekResult, error) {
	return v.S.PeekStanding(ctx, v.Config(), name, lines)
}

// WorkItemVerbs is loop.WorkItemService run in this process.
type WorkItemVerbs struct {
	S      *Service
	Config func() *config.Config
}

// WorkItems returns the work-item verbs under the config config returns.
func (s *Service) WorkItems(config func() *config.Config) WorkItemVerbs {
	return WorkItemVerbs{S: s, Config: config}
}

// List is Service.ListWorkItems.
func (v WorkItemVerbs) List(ctx context.Context, status string) ([]loop.WorkItemRow, error) {
	return v.S.ListWorkItems(ctx, v.Config(), status)
}

// Get is Service.GetWorkItem.
func (v WorkItemVerbs) Get(ctx context.Context, ref string) (loop.WorkItemRow, error) {
	return v.S.GetWorkItem(ctx, v.Config(), ref)
}

// Start is Service.StartWorkItem.
func (v WorkItemVerbs) Start(ctx context.Context, req loop.WorkItemStartRequest) (loop.WorkItemStartResult, error) {
	return v.S.StartWorkItem(ctx, v.Config(), req)
}

// Reply is Service.ReplyWorkItem.
func (v WorkItemVerbs) Reply(ctx context.Context, req loop.WorkItemReplyRequest) (loop.ReplyResult, error) {
	return v.S.Reply(ctx, v.Config(), req)
}

// Close is Service.CloseWorkItem.
func (v WorkItemVerbs) Close(ctx context.Context, req loop.WorkItemCloseRequest) (loop.CloseResult, error) {
	return v.S.CloseWorkItem(ctx, v.Config(), req.Ref, req.KeepTmux)
}
