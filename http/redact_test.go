package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/mock"
	"github.com/the-loop-dev/the-loop/redact"
)

// withBearer adds the operator's token to every request.
type withBearer struct{ token string }

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCP_WhatAToolAnswersIsRedacted(t *testing.T) {
	const token = "f00dcafe-the-operators-token-value"
	key := "sk-ant-api03-" + strings.Repeat("Q", 24)
	red := redact.New(nil)
	red.SetValue("service.token", token)
	leak := "the token " + token + " and a key " + key
	ts := httptest.NewUnstartedServer(nil)
	cfg := config.Default()
	cfg.Service.AllowedHosts = []string{ts.Listener.Addr().String()}
	srv := NewServer(Options{Token: "op-token", Redactor: red, Config: func() *config.Config { return cfg }, Standing: &mock.StandingService{
		TranscriptFn: func(context.Context, string, int) (loop.TranscriptResult, error) {
			return loop.TranscriptResult{Name: "alpha", Entries: []loop.TranscriptEntry{{Role: "assistant", Text: leak}}}, nil
		},
		GetFn: func(context.Context, string) (loop.StandingRow, error) {
			return loop.StandingRow{}, loop.NotFound("no standing session named %s", token)
		},
	}})
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + MCPPath,
		HTTPClient: &http.Client{Transport: withBearer{"op-token"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{toolTranscript, map[string]any{"name": "alpha"}}, {toolGet, map[string]any{"name": "alpha"}}} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		got := text(res)
		if b, err := res.MarshalJSON(); err == nil {
			got += string(b)
		}
		if strings.Contains(got, token) || strings.Contains(got, key) || !strings.Contains(got, redact.Mark) {
			t.Fatalf("%s answered %s", call.tool, got)
		}
	}
}
