package http

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
)

// transcriptInput is read_standing_session_transcript's input (REST's
// query of GET /standing-sessions/transcript).
type transcriptInput struct {
	Name string `json:"name" jsonschema:"the standing session's name"`
	Last int    `json:"last,omitempty" jsonschema:"how many entries, the newest ones (1 to 1000; default 20)"`
}

// addTranscriptTool registers read_standing_session_transcript: a read,
// like list and get.
func (s *Server) addTranscriptTool(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolTranscript,
		Description: "What a standing session's agent was told and answered: the last user prompts and assistant answers of its conversation, oldest first " +
			"(each {role, text, at}, answers with their token usage). A session not started yet has none; an unknown name is an error.",
	}, s.mcpTranscript)
}

func (s *Server) mcpTranscript(ctx context.Context, _ *mcp.CallToolRequest, in transcriptInput) (*mcp.CallToolResult, loop.TranscriptResult, error) {
	res, err := s.opt.Standing.Transcript(ctx, in.Name, in.Last)
	if err != nil {
		return nil, loop.TranscriptResult{}, toolError(err)
	}
	return nil, res, nil
}
