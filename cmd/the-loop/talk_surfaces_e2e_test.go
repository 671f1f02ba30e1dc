package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
	"github.com/the-loop-dev/the-loop/sdk"
)

const talkServiceConfig = `
state: {root: .the-loop}
service: {port: %PORT%}
routing: {tmux: {socketName: %SOCKET%, resumeProbeSeconds: 0.5, harnessKillGraceSeconds: 3}}
standingSessions:
  enabled: true
  sessions:
    - {name: supervisor, cwd: %DIR%, prompt: Watch.}
    - {name: helper, cwd: %DIR%, prompt: Help.}
`

// mcpSay calls say_to_standing_session through the go-sdk client.
func mcpSay(t *testing.T, url string, hc *http.Client, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "say_to_standing_session", Arguments: args})
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestTalk_RESTMCPAndSDKGiveTheSameOutcomeAndAnswer(t *testing.T) {
	port := freePort(t)
	e := hookEnv(t, strings.ReplaceAll(talkServiceConfig, "%PORT%", fmt.Sprint(port)), testkit.TurnTime(50*time.Millisecond))
	t.Cleanup(func() { e.run("stop") })
	e.must(0, "start")
	waitFor(t, "both boot turns", func() bool {
		rows := e.rows()
		return rows["supervisor"].Activity == loop.ActivityIdle && rows["supervisor"].LastAnswerAt != "" &&
			rows["helper"].Activity == loop.ActivityIdle && rows["helper"].LastAnswerAt != ""
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	token := e.token()
	answer := func(text string) string { return "fake answer to: " + framed(text) }
	idle := func() {
		waitActivity(t, e, "idle", func(r loop.StandingRow) bool { return r.Activity == loop.ActivityIdle })
	}

	// The CLI, through the service.
	r := e.must(0, "standing", "say", "supervisor", "--text", "cli", "--actor", "ops", "--wait", "--timeout", "20s")
	if strings.TrimSpace(r.stdout) != answer("cli") {
		t.Fatalf("cli: %s", r)
	}
	idle()

	// REST.
	body, _ := json.Marshal(map[string]any{"name": "supervisor", "text": "rest", "actor": "ops", "wait": true, "timeoutSeconds": 20})
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/standing-sessions/say", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := bearerClient(token).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rest loop.SayResult
	_ = json.NewDecoder(resp.Body).Decode(&rest)
	resp.Body.Close()
	if resp.StatusCode != 200 || rest.Outcome != loop.SaySubmitted || !rest.Delivered || rest.Reply != answer("rest") {
		t.Fatalf("rest: %d %+v", resp.StatusCode, rest)
	}
	idle()

	// The SDK.
	client := sdk.New(base, sdk.WithToken(token))
	got, err := client.Standing.Say(context.Background(), loop.StandingSayRequest{Name: "supervisor", Text: "sdk", Actor: "ops", Wait: true, TimeoutSeconds: 20})
	if err != nil || got.Outcome != loop.SaySubmitted || got.Reply != answer("sdk") {
		t.Fatalf("sdk: %+v %v", got, err)
	}
	idle()

	// MCP with the operator's token: the answer is the tool's text.
	res, err := mcpSay(t, base+"/mcp", bearerClient(token), map[string]any{"name": "supervisor", "text": "mcp", "actor": "ops", "wait": true, "timeoutSeconds": 20})
	if err != nil || res.IsError || toolText(res) != answer("mcp") {
		t.Fatalf("mcp: %+v %v", res, err)
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"outcome":"submitted"`) {
		t.Fatalf("mcp structured result %s", sc)
	}
	idle()

	// An agent asks another — the CLI run in its pane, over the socket:
	// framed as that agent, whatever actor it claims, its text fenced by a
	// fresh nonce.
	helper := loop.TmuxTargetFor("helper")
	out, code := inAgentPane(t, e, helper, "", "standing say supervisor --text 'from a peer' --actor ops --wait --timeout 20s")
	want := mustCompile("fake answer to: Message from standing session `helper` to standing session `supervisor` — .*\n\n" +
		"--- begin text from standing session helper \\(([0-9a-f]{16})\\) ---\nfrom a peer\n--- end ([0-9a-f]{16}) ---")
	if m := want.FindStringSubmatch(out); code != 0 || m == nil || m[1] != m[2] {
		t.Fatalf("agent's say: exit %d\n%s", code, out)
	}
	if evs := e.events("--type", "standing.said"); evs[len(evs)-1].Field("actor") != "standing:helper" {
		t.Fatalf("said %+v", evs[len(evs)-1])
	}
	// Waiting on itself would never end: refused, nothing pasted.
	n := len(e.agent.Messages())
	if out, code := inAgentPane(t, e, helper, "", "standing say helper --text 'me?' --wait --timeout 20s"); code == 0 || !strings.Contains(out, "its own answer") {
		t.Fatalf("a wait on itself: exit %d\n%s", code, out)
	}
	if len(e.agent.Messages()) != n {
		t.Fatal("a refused say pasted")
	}
}
