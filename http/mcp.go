package http

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
)

// MCPPath is where the MCP endpoint answers (original §8.4): exactly /mcp,
// no trailing-slash form. It is not a REST operation, so it is in neither
// Routes nor openapi.yaml.
const MCPPath = "/mcp"

// The MCP tools (original §8.4) read the standing sessions and talk to
// them. None starts, stops, restarts, creates or deletes one: an agent that
// reaches this endpoint must not be able to stop the session supervising it.
const (
	toolList = "list_standing_sessions"
	toolGet  = "get_standing_session"
	toolSay  = "say_to_standing_session"
	// toolTranscript reads, beside list and get (mcp_transcript.go).
	toolTranscript = "read_standing_session_transcript"
)

// newMCPHandler builds the MCP server (name "the-loop", version health's) and its
// streamable-HTTP handler. The handler is stateless — every tool is one
// request and one answer, so there is no session to keep (or to hold a
// shutdown open) — and answers in JSON. The go-sdk's own localhost check is
// off: guard applies decisions D24's Host allow-list here as on REST, and the SDK's
// check would refuse the names service.allowedHosts adds.
func (s *Server) newMCPHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "the-loop", Version: s.opt.Version}, &mcp.ServerOptions{Logger: s.log})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        toolList,
		Description: "List every standing session (declared in the config or created at runtime): its status, whether its agent runs, its tmux target.",
	}, s.mcpList)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        toolGet,
		Description: "One standing session's row; an unknown name is an error.",
	}, s.mcpGet)
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolSay,
		Description: "Deliver a message to a running standing session: the text is pasted into its agent's terminal once the agent is ready. " +
			"An unknown or stopped session, or an agent that is not ready, is an error and nothing is delivered. " +
			"The result's outcome says whether the agent took it (submitted), queued it behind its running turn (queued), or got it without hooks (delivered); " +
			"with wait true the tool's text is the session's answer to this very message.",
	}, s.mcpSay)
	s.addTranscriptTool(srv)
	s.addApprovalTools(srv)
	srv.AddReceivingMiddleware(s.redactTools)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     s.log,
		DisableLocalhostProtection: true,
	})
}

// mcp serves /mcp with h unless the request's config turns MCP off
// (service.mcp.enabled: false), in which case /mcp is a 404. The body is
// read here, within guard's limit, so a body over service.maxBodyBytes sent
// without a Content-Length is the same {"detail": …} 413 as on REST rather
// than the go-sdk's plain-text answer.
func (s *Server) mcp(h http.Handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !configOf(c).Service.MCPEnabled {
			return loop.NotFound("no MCP endpoint: service.mcp.enabled is false (set it to true to serve %s)", MCPPath)
		}
		req := c.Request()
		if caller, _ := CallerFrom(req.Context()); caller.Kind == CallerAgent {
			if ref := strings.TrimSpace(c.QueryParam("session")); ref != "" && ref != ownRef(caller.Agent) {
				return echo.NewHTTPError(http.StatusForbidden, describe(req)+" refused: this process runs in "+
					caller.Agent.String()+"'s agent pane, not "+ref+"'s; `the-loop mcp --session` must name its own session")
			}
		}
		if req.Body != nil && req.Body != http.NoBody {
			data, err := io.ReadAll(req.Body)
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					return err
				}
				return unprocessable("body: could not be read: %v", err)
			}
			req.Body = io.NopCloser(bytes.NewReader(data))
		}
		h.ServeHTTP(c.Response(), req)
		return nil
	}
}

// standingList is list_standing_sessions' result: the rows REST's
// GET /standing-sessions returns, under "sessions" (a tool's structured
// result is an object).
type standingList struct {
	Sessions []loop.StandingRow `json:"sessions" jsonschema:"every standing session, sorted by name"`
}

// nameInput names one standing session.
type nameInput struct {
	Name string `json:"name" jsonschema:"the standing session's name"`
}

// sayInput is say_to_standing_session's input (REST's StandingSayBody).
type sayInput struct {
	Name  string `json:"name" jsonschema:"the standing session's name"`
	Text  string `json:"text" jsonschema:"the message; it must hold more than whitespace"`
	Actor string `json:"actor,omitempty" jsonschema:"who speaks, named in the delivered message (default: none)"`
	Wait  bool   `json:"wait,omitempty" jsonschema:"wait for the session's answer to this message and return it as the tool's text"`
	// TimeoutSeconds bounds the wait (default 300).
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait for the answer, in seconds (default 300)"`
}

func (s *Server) mcpList(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, standingList, error) {
	rows, err := s.opt.Standing.List(ctx)
	if err != nil {
		return nil, standingList{}, toolError(err)
	}
	if rows == nil {
		rows = []loop.StandingRow{}
	}
	return nil, standingList{Sessions: rows}, nil
}

func (s *Server) mcpGet(ctx context.Context, _ *mcp.CallToolRequest, in nameInput) (*mcp.CallToolResult, loop.StandingRow, error) {
	row, err := s.opt.Standing.Get(ctx, in.Name)
	if err != nil {
		return nil, loop.StandingRow{}, toolError(err)
	}
	return nil, row, nil
}

// mcpSay delivers as REST's say does; a message that was not delivered (the
// agent not ready, or gone) is a tool error carrying the reason.
func (s *Server) mcpSay(ctx context.Context, _ *mcp.CallToolRequest, in sayInput) (*mcp.CallToolResult, loop.SayResult, error) {
	if in.TimeoutSeconds < 0 || !in.Wait && in.TimeoutSeconds != 0 {
		return nil, loop.SayResult{}, toolError(loop.Invalid("timeoutSeconds %v: give a number of seconds above 0, and only with wait true", in.TimeoutSeconds))
	}
	sayCtx := context.WithoutCancel(ctx)
	if in.Wait {
		sayCtx = ctx
	}
	res, err := s.opt.Standing.Say(sayCtx, loop.StandingSayRequest{Name: in.Name, Text: in.Text, Actor: in.Actor, Wait: in.Wait, TimeoutSeconds: in.TimeoutSeconds,
		Caller: agentCaller(ctx)})
	if err != nil {
		return nil, loop.SayResult{}, toolError(err)
	}
	if !res.Delivered {
		var why []string
		for _, m := range res.Messages {
			why = append(why, strings.TrimPrefix(m.Text, "error: "))
		}
		if len(why) == 0 {
			why = append(why, "the message to '"+in.Name+"' was not delivered")
		}
		return nil, loop.SayResult{}, errors.New(strings.Join(why, "\n"))
	}
	res.Messages = noneNil(res.Messages)
	if in.Wait {
		if res.ExitCode != 0 { // delivered, but no answer came
			var why []string
			for _, m := range res.Messages {
				why = append(why, strings.TrimPrefix(m.Text, "error: "))
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(why, "\n")}}}, res, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Reply}}}, res, nil
	}
	return nil, res, nil
}

// toolError is a verb's error as the tool error the caller reads: the
// operator's message, without the code.
func toolError(err error) error { return errors.New(loop.ErrorMessage(err)) }
