package http

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redactTools is the MCP middleware that redacts every tool's answer
// (Options.Redactor): each text content, the structured content (as its
// JSON) and an error's message. An agent reads a peer's transcript or
// answer through these tools, so no secret the service holds reaches it
// that way.
func (s *Server) redactTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" {
			return res, err
		}
		if err != nil {
			if red := s.opt.Redactor.String(err.Error()); red != err.Error() {
				return res, errors.New(red)
			}
			return res, err
		}
		out, ok := res.(*mcp.CallToolResult)
		if !ok || out == nil {
			return res, nil
		}
		for _, c := range out.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				t.Text = s.opt.Redactor.String(t.Text)
			}
		}
		if out.StructuredContent != nil {
			raw, merr := json.Marshal(out.StructuredContent)
			if merr != nil {
				return nil, merr
			}
			if red := s.opt.Redactor.String(string(raw)); red != string(raw) {
				out.StructuredContent = json.RawMessage(red)
			}
		}
		return out, nil
	}
}
