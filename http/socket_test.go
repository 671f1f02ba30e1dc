package http

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// socketHTTP is an HTTP client of the unix socket at path.
func socketHTTP(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
}

// TestSocket_TheOperatorNeedsNoToken: over the socket a peer of the
// service's uid outside every agent pane is the operator, with no token
// and whatever Host it names; over TCP the same request is a 401.
func TestSocket_TheOperatorNeedsNoToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	res, err := f.local.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "alpha", Verb: "start"})
	if err != nil || !res.OK {
		t.Fatalf("start over the socket: %+v %v", res, err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://evil.example/api/v1/standing-sessions", nil)
	resp, err := socketHTTP(f.sock).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a list over the socket naming another Host: %d, want 200", resp.StatusCode)
	}
	if r := f.sendWith(http.MethodGet, "/api/v1/standing-sessions", "", withoutToken()); r.status != http.StatusUnauthorized {
		t.Fatalf("the same list over TCP without a token: %d, want 401", r.status)
	}
}

// inPane runs sh -c script in a new window of the tmux session target (a
// pane of that session, as an agent's child would be) and returns what
// it wrote to stdout once it is done.
func inPane(t *testing.T, f *fixture, target, script string) string {
	t.Helper()
	dir := t.TempDir()
	out, done := filepath.Join(dir, "out"), filepath.Join(dir, "done")
	cmd := "sh -c '" + strings.ReplaceAll(script, "'", `'\''`) + "' > " + out + " 2>&1; touch " + done
	if _, err := testkit.TmuxRun(f.socket, "new-window", "-d", "-t", "="+target+":", cmd); err != nil {
		t.Fatalf("new-window in %s: %v", target, err)
	}
	testkit.Eventually(t, func() bool { _, err := os.Stat(done); return err == nil }, 30*time.Second, "the command in %s's pane to end", target)
	data, _ := os.ReadFile(out)
	return string(data)
}

// TestSocket_AProcessInAnAgentsPaneHasAnAgentsRights: a socket peer whose
// ancestry reaches a pane of a running session is that session's agent:
// it lists and reads, but a stop is refused naming the operator's shell,
// and it posts hooks and opens /mcp for its own session only.
func TestSocket_AProcessInAnAgentsPaneHasAnAgentsRights(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: it stands for a process in the agent's pane")
	}
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	if res, err := f.local.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "alpha", Verb: "start"}); err != nil || !res.OK {
		t.Fatalf("start: %+v %v", res, err)
	}
	curl := "curl -s -w ' %{http_code}' --unix-socket " + f.sock + " -H 'Content-Type: application/json' "
	target := loop.TmuxTargetFor("alpha")
	if got := inPane(t, f, target, curl+"http://x/api/v1/standing-sessions"); !strings.HasSuffix(got, " 200") || !strings.Contains(got, `"alpha"`) {
		t.Fatalf("a list from the agent's pane: %q, want 200 with the rows", got)
	}
	got := inPane(t, f, target, curl+`-d '{"name":"alpha","verb":"stop"}' http://x/api/v1/standing-sessions/control`)
	if !strings.HasSuffix(got, " 403") || !strings.Contains(got, "run this from the operator's shell") || !strings.Contains(got, "standing:alpha") {
		t.Fatalf("a stop from the agent's pane: %q, want 403 naming the operator's shell", got)
	}
	if row, err := f.local.Standing.Get(t.Context(), "alpha"); err != nil || !row.Running {
		t.Fatalf("alpha after the refused stop: %+v %v", row, err)
	}
	if got := inPane(t, f, target, curl+`-d '{}' 'http://x/api/v1/hooks?session=standing:beta'`); !strings.HasSuffix(got, " 403") {
		t.Fatalf("another session's hook from alpha's pane: %q, want 403", got)
	}
	if got := inPane(t, f, target, curl+`-d '{"hook_event_name":"Notification","session_id":"0f8fad5b-d9cb-469f-a165-70867728950e"}' 'http://x/api/v1/hooks?session=standing:alpha'`); !strings.HasSuffix(got, " 200") {
		t.Fatalf("its own hook from alpha's pane: %q, want 200", got)
	}
	if got := inPane(t, f, target, curl+`-d '{}' 'http://x/mcp?session=standing:beta'`); !strings.HasSuffix(got, " 403") {
		t.Fatalf("/mcp naming another session from alpha's pane: %q, want 403", got)
	}
	// The operator, outside every pane, still may.
	if res, err := f.local.Standing.Control(t.Context(), loop.StandingControlRequest{Name: "alpha", Verb: "stop"}); err != nil || !res.OK {
		t.Fatalf("the operator's stop over the socket: %+v %v", res, err)
	}
}

// TestSocket_AnotherUIDIsRefused: a peer of another uid that reaches the
// socket (here made world-writable for the test) gets a 403 naming its
// uid, and nothing of the service.
func TestSocket_AnotherUIDIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as uid 65534 (nobody)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: it stands for the other user's client")
	}
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	if err := os.Chmod(filepath.Dir(f.sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.sock, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("curl", "-s", "-w", " %{http_code}", "--unix-socket", f.sock, "http://x/api/v1/standing-sessions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("curl as nobody: %v\n%s", err, out)
	}
	if got := string(out); !strings.HasSuffix(got, " 403") || !strings.Contains(got, "uid 65534") {
		t.Fatalf("a list over the socket as uid 65534: %q, want 403 naming the uid", got)
	}
}

// TestSocket_TheMCPBridgeRelaysTheServicesTools: BridgeMCP serves, on a
// pair of pipes, the tools of the service's /mcp over its socket — the
// service's own list, called as any MCP client calls them.
func TestSocket_TheMCPBridgeRelaysTheServicesTools(t *testing.T) {
	f := newFixture(t, fixtureOptions{sessions: []string{"alpha"}})
	toBridge, fromClient := io.Pipe()
	toClient, fromBridge := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	bridged := make(chan error, 1)
	go func() {
		bridged <- BridgeMCP(ctx, toBridge, fromBridge, socketHTTP(f.sock), "http://the-loop.sock"+MCPPath)
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "the-loop-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatalf("connecting through the bridge: %v", err)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("tools through the bridge: %+v %v", tools, err)
	}
	var row struct {
		Name string `json:"name"`
	}
	structured(t, callTool(t, cs, toolGet, map[string]any{"name": "alpha"}), &row)
	if row.Name != "alpha" {
		t.Fatalf("get through the bridge: %+v", row)
	}
	_ = cs.Close()
	_ = fromClient.Close()
	cancel()
	if err := <-bridged; err != nil {
		t.Fatalf("the bridge ended with %v", err)
	}
}
