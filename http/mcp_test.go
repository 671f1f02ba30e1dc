package http

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/store"
)

// The MCP tests drive /mcp with the go-sdk's own client over streamable
// HTTP, against the fixture's real service (original §8.4).

// connectMCP opens an MCP session with the fixture's /mcp, through hc (the
// fixture's client when nil); it is closed when the test ends.
func connectMCP(t *testing.T, f *fixture, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	if hc == nil {
		hc = f.http
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "the-loop-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + MCPPath, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s%s: %v", f.url, MCPPath, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callTool calls a tool; a protocol error fails the test (a tool error is
// the result's IsError).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text is a result's text content, joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a successful result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
}

func TestMCP_ListsExactlyItsTools(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	cs := connectMCP(t, f, nil)
	if info := cs.InitializeResult().ServerInfo; info.Name != "the-loop" || info.Version != "test-version" {
		t.Fatalf("server info %+v", info)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"decide_approval", "get_standing_session", "list_approvals", "list_standing_sessions", "read_standing_session_transcript", "say_to_standing_session"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	// An agent reaching /mcp cannot stop the session supervising it.
	for _, n := range names {
		for _, verb := range []string{"start", "stop", "restart", "create", "delete", "control"} {
			if strings.Contains(n, verb) {
				t.Errorf("tool %q controls sessions (%s)", n, verb)
			}
		}
	}
}

func TestMCP_ToolsReadAndDeliverThroughTheCore(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"alpha","verb":"start"}`); r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	cs := connectMCP(t, f, nil)

	var list struct {
		Sessions []loop.StandingRow `json:"sessions"`
	}
	structured(t, callTool(t, cs, "list_standing_sessions", nil), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Name != "alpha" || !list.Sessions[0].Running || list.Sessions[0].TmuxTarget != "loop-standing-alpha" {
		t.Fatalf("list: %+v", list)
	}

	var row loop.StandingRow
	structured(t, callTool(t, cs, "get_standing_session", map[string]any{"name": "alpha"}), &row)
	if row.Name != "alpha" || !row.Running || !row.Declared || row.Status != "running" {
		t.Fatalf("get: %+v", row)
	}

	var said loop.SayResult
	structured(t, callTool(t, cs, "say_to_standing_session", map[string]any{"name": "alpha", "text": "hello from MCP", "actor": "mcp-agent"}), &said)
	if !said.Delivered || said.ExitCode != 0 || said.Name != "alpha" {
		t.Fatalf("say: %+v", said)
	}
	f.agent.WaitFor(t, func(e testkit.Entry) bool {
		return e.Kind == "message" && strings.Contains(e.Text, "Message from your operator (mcp-agent) to standing session `alpha`:") &&
			strings.Contains(e.Text, "hello from MCP")
	}, 5*time.Second)
	if evs := f.events(store.EventQuery{Types: []string{"standing.said"}}); len(evs) != 1 {
		t.Fatalf("%d standing.said events", len(evs))
	}
}

func TestMCP_UnknownNamesAreToolErrors(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}, agentBin: t.TempDir()})
	cs := connectMCP(t, f, nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_standing_session", map[string]any{"name": "nobody"}, "no standing session 'nobody'"},
		{"say_to_standing_session", map[string]any{"name": "nobody", "text": "hi"}, "no standing session 'nobody' — it is neither declared"},
		{"say_to_standing_session", map[string]any{"name": "alpha", "text": "hi"}, "standing session 'alpha' has never been started"},
		{"say_to_standing_session", map[string]any{"name": "alpha", "text": "   "}, "the message is empty"},
		{"say_to_standing_session", map[string]any{"name": "alpha"}, "text"},
	}
	for _, c := range cases {
		res := callTool(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: isError %v, %q (want an error naming %q)", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

func TestMCP_SayToAnAgentNotReadyIsAToolError(t *testing.T) {
	agent := testkit.FakeAgent(t, testkit.Delay(30*time.Second))
	o := fixtureOptions{sessions: []string{"slow"}, agentBin: agent.BinDir()}
	f := newFixture(t, o)
	f.writeConfig(strings.Replace(f.configYAML(o), "readySeconds: 10", "readySeconds: 0.5", 1))
	if r := f.post("/api/v1/standing-sessions/control", `{"name":"slow","verb":"start"}`); r.status != 200 || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	cs := connectMCP(t, f, nil)
	res := callTool(t, cs, "say_to_standing_session", map[string]any{"name": "slow", "text": "are you there?"})
	if !res.IsError || !strings.Contains(text(res), "the agent in loop-standing-slow is not ready for input") {
		t.Fatalf("say to a starting agent: isError %v, %q", res.IsError, text(res))
	}
	if n := len(agent.Messages()); n != 0 {
		t.Fatalf("the agent got %d messages", n)
	}
	if evs := f.events(store.EventQuery{Types: []string{"standing.said"}}); len(evs) != 0 {
		t.Fatalf("%d standing.said events for an undelivered message", len(evs))
	}
}

func TestMCP_DisabledIsNotFound(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir(), extra: "service:\n  mcp:\n    enabled: false\n"})
	r := f.post(MCPPath, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.detail(t), "service.mcp.enabled is false") {
		t.Fatalf("POST /mcp with MCP off: %d %s", r.status, r.body)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "the-loop-test", Version: "1"}, nil)
	if cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + MCPPath, HTTPClient: f.plain, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Fatal("the MCP client connected to a disabled endpoint")
	}
	// Turned back on, the same service answers (the config is read per request).
	f.writeConfig(f.configYAML(fixtureOptions{}))
	connectMCP(t, f, nil)
	// REST is unaffected either way, and /mcp is not in its route table.
	if slices.ContainsFunc(f.server.Routes(), func(r Route) bool { return r.Path == MCPPath }) {
		t.Fatal("/mcp is in the REST route table")
	}
}
