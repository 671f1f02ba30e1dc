package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// End to end: the operator's token by default, each agent's own
// credential, and defects 2 and 3 as an operator sees them.

// bearerClient sends Authorization: Bearer token with every request, as an
// MCP client configured with the header does.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: bearerTransport(token)}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpTools lists /mcp's tools through hc, or returns why it could not.
func mcpTools(t *testing.T, url string, hc *http.Client) (int, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		return 0, err
	}
	return len(tools.Tools), nil
}

func TestCredentials_DefaultConfigMakesATokenAndAgentsGetTheirOwn(t *testing.T) {
	e, port := serviceEnv(t, threeSessions)
	e.must(0, "start")
	root := filepath.Join(e.dir, ".the-loop")
	for path, want := range map[string]os.FileMode{root: 0o700, filepath.Join(root, "service.token"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v; want mode %04o", path, fi, err, want)
		}
	}
	token := e.token()
	if len(token) < 32 {
		t.Fatalf("token %q is too short for 128 bits", token)
	}
	if r := e.must(0, "token"); strings.TrimSpace(r.stdout) != token {
		t.Fatalf("the-loop token: %s", r)
	}
	// The CLI sends it: the verbs work unchanged.
	if rows := e.rows(); !rows["one"].Running || !rows["two"].Running {
		t.Fatalf("standing list: %+v", rows)
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	where := filepath.Join(root, "service.token")
	for _, path := range []string{"/api/v1/status", "/api/v1/standing-sessions", "/api/v1/events", "/api/v1/openapi.yaml", "/mcp"} {
		if code, body := rawGet(t, base+path, ""); code != http.StatusUnauthorized || !strings.Contains(body, where) || strings.Contains(body, token) {
			t.Fatalf("GET %s without a token: %d %s", path, code, body)
		}
	}
	if code, body := rawGet(t, base+"/api/v1/health", ""); code != http.StatusOK {
		t.Fatalf("health: %d %s", code, body)
	}
	if n, err := mcpTools(t, base+"/mcp", bearerClient(token)); err != nil || n != 6 {
		t.Fatalf("MCP with the operator's token: %d, %v", n, err)
	}

	// Each agent has its own credential, and none of the operator's.
	waitFor(t, "both agents to start", func() bool { return len(e.starts()) == 2 })
	starts := e.starts()
	var creds []string
	for _, s := range starts {
		c := s.Env["THE_LOOP_AGENT_TOKEN"]
		if len(c) < 32 || c == token || slices.Contains(creds, c) {
			t.Fatalf("agent credential %q (others %q)", c, creds)
		}
		creds = append(creds, c)
		if _, ok := s.Env["THE_LOOP_TOKEN"]; ok {
			t.Fatal("an agent inherited THE_LOOP_TOKEN")
		}
	}
	if code, body := rawGet(t, base+"/api/v1/standing-sessions", "Bearer "+creds[0]); code != http.StatusForbidden {
		t.Fatalf("REST with an agent credential: %d %s", code, body)
	}
	// Over TCP an agent credential is refused, on /mcp too: agents reach
	// the service over its socket.
	if code, body := rawGet(t, base+"/mcp", "Bearer "+creds[0]); code != http.StatusForbidden {
		t.Fatalf("/mcp over TCP with an agent credential: %d %s", code, body)
	}
	if _, err := mcpTools(t, base+"/mcp", bearerClient(creds[0])); err == nil {
		t.Fatal("MCP over TCP with an agent credential answered")
	}
	// No log line or event carries a token.
	logs, _ := os.ReadFile(filepath.Join(root, "logs", "service.log"))
	evs := e.must(0, "events", "--format", "json").stdout
	for _, secret := range append(creds, token) {
		if strings.Contains(string(logs), secret) || strings.Contains(evs, secret) {
			t.Fatal("a token is in the service log or the event log")
		}
	}

	// Rotated, the old token goes once the service restarts; the CLI follows.
	r := e.must(0, "token", "--rotate")
	rotated := strings.TrimSpace(r.stdout)
	if rotated == token || rotated != e.token() {
		t.Fatalf("rotate: %s", r)
	}
	e.must(0, "restart")
	if code, _ := rawGet(t, base+"/api/v1/status", "Bearer "+token); code != http.StatusUnauthorized {
		t.Fatalf("the old token after rotate and restart: %d", code)
	}
	if rows := e.rows(); !rows["one"].Running {
		t.Fatalf("standing list after the rotation: %+v", rows)
	}
	// The restarted agents have new credentials; the old ones are void.
	if code, _ := rawGet(t, base+"/mcp", "Bearer "+creds[0]); code != http.StatusUnauthorized {
		t.Fatalf("a stopped agent's credential: %d", code)
	}
}

func TestCredentials_FilesOthersMayReadOrWriteAreRefused(t *testing.T) {
	e, _ := serviceEnv(t, threeSessions)
	root := filepath.Join(e.dir, ".the-loop")
	e.must(0, "token") // creates the state root and the token file
	tokenFile := filepath.Join(root, "service.token")
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"start", "serve"} {
		r := e.must(2, verb)
		if !strings.Contains(r.stderr, tokenFile) || !strings.Contains(r.stderr, "0644") {
			t.Fatalf("%s with a 0644 token file: %s", verb, r)
		}
	}
	if err := os.Chmod(tokenFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	r := e.must(2, "start")
	if !strings.Contains(r.stderr, root) || !strings.Contains(r.stderr, "state root") {
		t.Fatalf("start with a world-writable state root: %s", r)
	}
	if pid := e.servicePID(); pid != 0 || len(e.starts()) != 0 {
		t.Fatalf("something started (service pid %d, %d agents)", pid, len(e.starts()))
	}
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	if r := e.must(2, "start"); !strings.Contains(r.stderr, e.cfg) {
		t.Fatalf("start with a world-writable CLI config: %s", r)
	}
}

func TestCredentials_AuthNoneIsRefusedWithExposed(t *testing.T) {
	e, _ := serviceEnv(t, strings.Replace(threeSessions, "service: {port: %PORT%}", "service: {port: %PORT%, auth: none, exposed: true}", 1))
	r := e.must(2, "start")
	if !strings.Contains(r.stderr, "service.auth") || !strings.Contains(r.stderr, "service.exposed") {
		t.Fatalf("start: %s", r)
	}
}

func TestCredentials_AuthNoneAsksForNothing(t *testing.T) {
	e, port := serviceEnv(t, strings.Replace(threeSessions, "service: {port: %PORT%}", "service: {port: %PORT%, auth: none}", 1))
	e.must(0, "start")
	if code, body := rawGet(t, fmt.Sprintf("http://127.0.0.1:%d/api/v1/standing-sessions", port), ""); code != http.StatusOK {
		t.Fatalf("auth none without a token: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".the-loop", "service.token")); err == nil {
		t.Fatal("auth none made a token file")
	}
}

// Defect 3: a tmux server that runs before the-loop, with the secrets in
// its global environment, hands none of them to an agent — through the
// service and in-process alike.
func TestCredentials_SecretsNeverReachAnAgentThroughAPreexistingServer(t *testing.T) {
	for _, yaml := range []string{threeSessions, strings.Replace(threeSessions, "service: {port: %PORT%}", "service: {port: %PORT%, enabled: false}", 1)} {
		e, _ := serviceEnv(t, strings.Replace(yaml, "service: {port: %PORT%",
			"channels: {slack: {botTokenEnv: E2E_BOT, appTokenEnv: E2E_APP}}\nservice: {port: %PORT%", 1))
		if _, err := testkit.TmuxRun(e.socket, "new-session", "-d", "-s", "operator", "sleep", "600"); err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{"E2E_BOT": "xoxb-server", "E2E_APP": "xapp-server", "THE_LOOP_TOKEN": "operator-server"}
		for k, v := range secrets {
			if _, err := testkit.TmuxRun(e.socket, "set-environment", "-g", k, v); err != nil {
				t.Fatal(err)
			}
		}
		e.extraEnv = []string{"E2E_BOT=xoxb-cli", "E2E_APP=xapp-cli", "THE_LOOP_TOKEN=operator-cli"}
		e.must(0, "start")
		waitFor(t, "both agents to start", func() bool { return len(e.starts()) == 2 })
		starts := e.starts()
		for _, s := range starts {
			for k := range secrets {
				if v, ok := s.Env[k]; ok {
					t.Fatalf("agent %s holds %s=%q", s.SessionID, k, v)
				}
			}
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.Pid))
			if err != nil {
				t.Fatal(err)
			}
			for _, leaked := range []string{"xoxb-", "xapp-", "operator-server", "operator-cli"} {
				if strings.Contains(string(data), leaked) {
					t.Fatalf("agent %d's environment holds %q", s.Pid, leaked)
				}
			}
			if s.Env["THE_LOOP_AGENT_TOKEN"] == "" || s.Env["TMUX_PANE"] == "" {
				t.Fatalf("agent env %v", s.Env)
			}
		}
		e.must(0, "stop")
	}
}

// Defect 2: a variadic harness argument does not swallow the boot prompt,
// and a work-item prompt that starts with "---" stays the prompt.
func TestCredentials_BootPromptFollowsDoubleDash(t *testing.T) {
	e := newEnv(t)
	e.config(`
state: {root: .the-loop}
service: {enabled: false}
routing:
  harnessArgs: {claude: ["--allowedTools", "Read", "Grep"]}
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
      harnessArgs: ["--allowedTools", "Read", "Grep"]
      prompt: Watch the work items.
`)
	e.must(0, "standing", "start", "supervisor")
	start := e.agent.WaitForKind(t, "start", 10*time.Second)
	if !strings.Contains(start.Prompt, "standing session") || !strings.HasSuffix(start.Prompt, "Watch the work items.") {
		t.Fatalf("the agent's prompt is %q (argv %q)", start.Prompt, start.Argv)
	}
	prompt := "---\nkind: brief\n---\nFix the flaky test."
	e.must(0, "sessions", "start", "--work-item", octoRef, "--cwd", e.dir, "--prompt="+prompt)
	var item *testkit.Entry
	testkit.Eventually(t, func() bool {
		for _, s := range e.starts() {
			if s.Prompt == prompt {
				item = &s
				return true
			}
		}
		return false
	}, 10*time.Second, "the work item's agent to start with its prompt")
	if i := slices.Index(item.Argv, "--"); i < 0 || item.Argv[i+1] != prompt {
		t.Fatalf("argv %q", item.Argv)
	}
	e.must(0, "stop")
	e.run("sessions", "close", "--work-item", octoRef)
}

// standingSessions.mcp: every claude spawn gets --mcp-config, a 0600 file
// under the state root naming the stdio bridge `the-loop mcp` (no
// credential) — and an MCP client that runs it gets the service's tools.
func TestCredentials_StandingMCPGivesEachAgentAnMCPConfig(t *testing.T) {
	e, _ := serviceEnv(t, strings.Replace(threeSessions, "  enabled: true\n", "  enabled: true\n  mcp: true\n", 1))
	e.must(0, "start")
	waitFor(t, "both agents to start", func() bool { return len(e.starts()) == 2 })
	for _, s := range e.starts() {
		i := slices.Index(s.Argv, "--mcp-config")
		if i < 0 || i+1 >= len(s.Argv) {
			t.Fatalf("argv %q has no --mcp-config", s.Argv)
		}
		path := s.Argv[i+1]
		if !strings.HasPrefix(path, filepath.Join(e.dir, ".the-loop")+"/") {
			t.Fatalf("MCP config %s is not under the state root", path)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("MCP config %s: %v %v", path, fi, err)
		}
		data, _ := os.ReadFile(path)
		var doc struct {
			MCPServers map[string]struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		srv := doc.MCPServers["the-loop"]
		if srv.Type != "stdio" || srv.Command != binary || len(srv.Args) != 5 || srv.Args[0] != "mcp" ||
			strings.Contains(string(data), s.Env["THE_LOOP_AGENT_TOKEN"]) {
			t.Fatalf("MCP config %s: want the stdio bridge `the-loop mcp …` and no credential", data)
		}
		// The bridge the config names serves the service's tools over the
		// socket (run here from outside every pane: the operator's rights).
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(srv.Command, srv.Args...)}, nil)
		if err != nil {
			t.Fatalf("the MCP bridge %s %q: %v", srv.Command, srv.Args, err)
		}
		tools, err := cs.ListTools(t.Context(), nil)
		_ = cs.Close()
		if err != nil || len(tools.Tools) != 6 {
			t.Fatalf("MCP through the bridge: %+v, %v", tools, err)
		}
		if p := s.Prompt; !strings.Contains(p, "standing session") {
			t.Fatalf("prompt %q after --mcp-config", p)
		}
	}
}
