package http

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
)

// The approvals' MCP tools (decisions D35): one agent decides for another
// — a supervisor for its workers — only where
// standingSessions.approvals.deciders grants it, never for itself; none
// is granted by default. The operator (a socket peer of its own shell, or
// its token) may decide every one.
const (
	toolApprovals = "list_approvals"
	toolDecide    = "decide_approval"
)

// addApprovalTools adds list_approvals and decide_approval to srv.
func (s *Server) addApprovalTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolApprovals,
		Description: "List the pending permission requests of the standing sessions this caller may decide for (an agent: the ones " +
			"standingSessions.approvals.deciders grants it), with the tool and its full input.",
		OutputSchema: outputSchema[approvalList](),
	}, s.mcpApprovals)
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolDecide,
		Description: "Allow or deny one pending permission request by its id; a deny's message is what the asking agent reads, " +
			"framed with who denied. An agent decides only for the sessions it is granted, never for itself.",
		OutputSchema: outputSchema[loop.Approval](),
	}, s.mcpDecide)
}

// outputSchema is T's output schema with a tool input (json.RawMessage)
// any JSON value: inferred, it would be an array of bytes, and every
// approval's object input would fail the SDK's output check.
func outputSchema[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Description: "the tool's input, as the agent CLI sent it"},
	}})
	if err != nil {
		panic("the approvals' MCP output schema: " + err.Error()) // a type of this package: a programming error
	}
	return sch
}

// approvalList is list_approvals' result.
type approvalList struct {
	Approvals []loop.Approval `json:"approvals" jsonschema:"the pending approvals the caller may decide, newest first"`
}

// decideInput is decide_approval's input.
type decideInput struct {
	ID       string `json:"id" jsonschema:"the approval's id, as list_approvals gives it"`
	Decision string `json:"decision" jsonschema:"allow or deny"`
	Message  string `json:"message,omitempty" jsonschema:"a deny's message (at most 4 KiB), which the asking agent reads"`
}

// decider is who the tool's caller decides as, and whether it may decide
// for session.
func (s *Server) decider(ctx context.Context) (by string, may func(session string) bool, err error) {
	agent := agentCaller(ctx)
	if agent == nil {
		return "operator", func(string) bool { return true }, nil
	}
	if agent.Standing == "" {
		return "", nil, loop.Invalid("a work item's agent (%s) decides no approval; only standing sessions granted by standingSessions.approvals.deciders do", agent.String())
	}
	cfg := s.opt.Config()
	return "standing:" + agent.Standing, func(session string) bool { return cfg.Standing.MayDecide(agent.Standing, session) }, nil
}

func (s *Server) mcpApprovals(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, approvalList, error) {
	desk, err := s.approvals()
	if err != nil {
		return nil, approvalList{}, toolError(err)
	}
	_, may, err := s.decider(ctx)
	if err != nil {
		return nil, approvalList{}, toolError(err)
	}
	list, err := desk.Approvals(ctx, "")
	if err != nil {
		return nil, approvalList{}, toolError(err)
	}
	out := []loop.Approval{}
	for _, a := range list {
		if a.Status == loop.ApprovalPending && may(a.Session) {
			out = append(out, a)
		}
	}
	return nil, approvalList{Approvals: out}, nil
}

func (s *Server) mcpDecide(ctx context.Context, _ *mcp.CallToolRequest, in decideInput) (*mcp.CallToolResult, loop.Approval, error) {
	desk, err := s.approvals()
	if err != nil {
		return nil, loop.Approval{}, toolError(err)
	}
	by, may, err := s.decider(ctx)
	if err != nil {
		return nil, loop.Approval{}, toolError(err)
	}
	list, err := desk.Approvals(ctx, "")
	if err != nil {
		return nil, loop.Approval{}, toolError(err)
	}
	for _, a := range list {
		if a.ID != in.ID {
			continue
		}
		if !may(a.Session) {
			return nil, loop.Approval{}, toolError(loop.Invalid("%s may not decide standing session %s's approvals: standingSessions.approvals.deciders grants it none of them (and no session decides its own)", by, a.Session))
		}
		decided, err := desk.Decide(context.WithoutCancel(ctx), in.ID, loop.ApprovalDecision{Decision: in.Decision, Message: in.Message, Session: a.Session}, by)
		if err != nil {
			return nil, loop.Approval{}, toolError(err)
		}
		return nil, decided, nil
	}
	return nil, loop.Approval{}, toolError(loop.NotFound("no approval %q is recorded: list_approvals lists the pending ones", in.ID))
}
