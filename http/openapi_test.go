package http

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// The contract tests (original §8.3): the authored openapi.yaml passes
// kin-openapi's own validation, its (method, path, operationId) triples are
// the registered route table's, and every response a REST test receives is
// validated against it — the fixture's HTTP client goes through
// contractTransport, so a test written tomorrow is covered too.

// contract is the authored file, loaded and validated, with a router over
// its operations.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

// loadContract parses and validates openapi.yaml once per test binary (the
// document is only read afterwards).
var loadContract = sync.OnceValues(func() (*contract, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("loading openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.yaml does not validate: %w", err)
	}
	// Route by path alone: the tests' service listens on 127.0.0.1:<any port>,
	// not on the file's server URL.
	routed := *doc
	routed.Servers = nil
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("routing openapi.yaml: %w", err)
	}
	return &contract{doc: doc, router: router}, nil
})

// mustContract returns the contract or fails the test.
func mustContract(t testing.TB) *contract {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// routes returns the file's operations as (method, path, operationId), sorted.
func (c *contract) routes() []Route {
	var out []Route
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, Route{Method: method, Path: path, OperationID: op.OperationID})
		}
	}
	sortRoutes(out)
	return out
}

func sortRoutes(rs []Route) {
	slices.SortFunc(rs, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method), cmp.Compare(a.OperationID, b.OperationID))
	})
}

// routeDiff returns the triples only the code registers and those only the
// file describes.
func routeDiff(code, file []Route) (onlyCode, onlyFile []Route) {
	for _, r := range code {
		if !slices.Contains(file, r) {
			onlyCode = append(onlyCode, r)
		}
	}
	for _, r := range file {
		if !slices.Contains(code, r) {
			onlyFile = append(onlyFile, r)
		}
	}
	sortRoutes(onlyCode)
	sortRoutes(onlyFile)
	return onlyCode, onlyFile
}

// check validates one exchange against the contract: the request with
// ValidateRequest, the response (status, content type, body) with
// ValidateResponse, undeclared statuses included. A request the contract
// refuses must not be answered 2xx. /mcp is not part of the contract and is
// let through. An exchange the contract has no
// operation for (an unknown path, a method a path does not take) must be
// the service's 404 or 405, or one of guard's refusals (401, 403, 413, 415),
// with an ErrorBody.
func (c *contract) check(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if req.URL.Path == MCPPath {
		return nil // MCP, not a REST operation: its exchanges are the MCP tests' business
	}
	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := c.router.FindRoute(vreq)
	if err != nil {
		if !slices.Contains([]int{http.StatusNotFound, http.StatusMethodNotAllowed, // the router's answers
			http.StatusUnauthorized, http.StatusForbidden, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge}, // guard's, before routing
			status) {
			return fmt.Errorf("%s: the contract has no such operation (%v), yet the service answered %d", describe(req), err, status)
		}
		return c.errorBody(header, body)
	}
	opts := &openapi3filter.Options{
		SkipSettingDefaults:   true,
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	var problems []error
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && status/100 == 2 {
		problems = append(problems, fmt.Errorf("the contract refuses the request, yet the service answered %d: %w", status, err))
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	if err := openapi3filter.ValidateResponse(ctx, out.SetBodyBytes(body)); err != nil {
		problems = append(problems, fmt.Errorf("the response breaks the contract: %w", err))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("%s %s → %d %s: %w", route.Operation.OperationID, describe(req), status, clip(body), err)
	}
	return nil
}

// errorBody validates a body against the ErrorBody schema.
func (c *contract) errorBody(header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("error response with content type %q", ct)
	}
	v, err := openapi3filter.JSONBodyDecoder(bytes.NewReader(body), header, nil, nil)
	if err != nil {
		return fmt.Errorf("error body %s: %w", clip(body), err)
	}
	schema := c.doc.Components.Schemas["ErrorBody"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("error body %s is not an ErrorBody: %w", clip(body), err)
	}
	return nil
}

// clip shortens a body for a message.
func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// contractTransport is an http.RoundTripper that checks every exchange it
// carries against the contract and reports what breaks it.
type contractTransport struct {
	base     http.RoundTripper
	contract *contract
	report   func(error)
}

// RoundTrip sends req, then checks the exchange; the caller reads the
// response as it came.
func (ct *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = data
		sent := req.Clone(req.Context())
		sent.Body = io.NopCloser(bytes.NewReader(data))
		req = sent
	}
	resp, err := ct.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := ct.contract.check(req, reqBody, resp.StatusCode, resp.Header, body); err != nil {
		ct.report(err)
	}
	return resp, nil
}

// validatedClient is an HTTP client whose every exchange is checked
// against the contract; what breaks it fails t.
func validatedClient(t testing.TB, base http.RoundTripper) *http.Client {
	c := mustContract(t)
	return &http.Client{Transport: &contractTransport{base: base, contract: c, report: func(err error) {
		t.Errorf("OpenAPI contract: %v", err)
	}}}
}

func TestOpenAPI_FilePassesKinOpenAPIValidation(t *testing.T) {
	c := mustContract(t)
	if c.doc.OpenAPI != "3.1.0" || c.doc.Info.Title != "the-loop control plane" || c.doc.Info.Version != "1" {
		t.Fatalf("openapi %q, title %q, version %q", c.doc.OpenAPI, c.doc.Info.Title, c.doc.Info.Version)
	}
	// The named schemas are there, strict where our types are.
	for _, name := range []string{"StandingRow", "MisconfiguredRow", "ControlResult", "SayResult", "Report", "ServiceRow",
		"Health", "PollSummary", "ErrorBody", "StandingCreateBody", "StandingDeleteBody", "StandingControlBody", "StandingSayBody"} {
		ref := c.doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Errorf("components.schemas lacks %s", name)
			continue
		}
		if ap := ref.Value.AdditionalProperties; ap.Has == nil || *ap.Has {
			t.Errorf("%s admits other keys", name)
		}
	}
	env := c.doc.Components.Schemas["EventEnvelope"].Value
	if ap := env.AdditionalProperties.Schema; ap == nil || ap.Value == nil || ap.Value.Type.Includes("null") {
		t.Errorf("EventEnvelope's other keys are not typed (or admit null)")
	}
	rowRequired := c.doc.Components.Schemas["StandingRow"].Value.Required
	for _, k := range rowKeys {
		if !slices.Contains(rowRequired, k) {
			t.Errorf("StandingRow does not require %q", k)
		}
	}
}

func TestOpenAPI_RoutesMatchTheRegisteredTable(t *testing.T) {
	code := NewServer(Options{}).Routes()
	sortRoutes(code)
	file := mustContract(t).routes()
	if onlyCode, onlyFile := routeDiff(code, file); len(onlyCode)+len(onlyFile) > 0 {
		t.Fatalf("route table and openapi.yaml differ:\n  registered, not in the file: %v\n  in the file, not registered: %v", onlyCode, onlyFile)
	}
	if len(code) != len(file) {
		t.Fatalf("%d registered routes, %d operations in the file", len(code), len(file))
	}
}

// TestOpenAPI_ParityCheckCanFail: the comparison is not vacuous — a table
// with one route dropped, one renamed and one added is told apart from the
// file, naming each.
func TestOpenAPI_ParityCheckCanFail(t *testing.T) {
	file := mustContract(t).routes()
	altered := NewServer(Options{}).Routes()
	dropped := altered[0]
	altered = altered[1:]
	renamed := altered[0]
	altered[0].OperationID += "V2"
	added := Route{http.MethodDelete, "/api/v1/standing-sessions/one", "removeStandingSession"}
	altered = append(altered, added)

	onlyCode, onlyFile := routeDiff(altered, file)
	wantCode := []Route{added, {renamed.Method, renamed.Path, renamed.OperationID + "V2"}}
	wantFile := []Route{dropped, renamed}
	sortRoutes(wantCode)
	sortRoutes(wantFile)
	if !slices.Equal(onlyCode, wantCode) || !slices.Equal(onlyFile, wantFile) {
		t.Fatalf("diff of the altered table:\n  only in code %v (want %v)\n  only in file %v (want %v)", onlyCode, wantCode, onlyFile, wantFile)
	}
}

func TestOpenAPI_ServedAsAuthored(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	resp, err := f.http.Get(f.url + "/api/v1/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" || !bytes.Equal(body, openAPIYAML) {
		t.Fatalf("GET openapi.yaml: %d %q, %d bytes (want the %d embedded)", resp.StatusCode, resp.Header.Get("Content-Type"), len(body), len(openAPIYAML))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("the served document does not validate: %v", err)
	}
}

// TestOpenAPI_ValidationBites drives the fixture's checking transport
// against a stub that answers with hand-written bodies: what breaks the
// contract is reported, what keeps it is not.
func TestOpenAPI_ValidationBites(t *testing.T) {
	var answer struct {
		status int
		ct     string
		body   string
	}
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", answer.ct)
		w.WriteHeader(answer.status)
		_, _ = io.WriteString(w, answer.body)
	}))
	defer stub.Close()
	var reports []error
	client := &http.Client{Transport: &contractTransport{base: http.DefaultTransport, contract: mustContract(t),
		report: func(err error) { reports = append(reports, err) }}}

	row := `{"name":"alpha","declared":true,"description":"","autoStart":true,"harness":"claude","cwd":"/w","tmuxTarget":"loop-standing-alpha",` +
		`"ref":"standing:alpha","status":"running","running":true,"harnessSessionId":"x","slackChannel":"","slackThread":"",` +
		`"startedAt":"2026-01-02T03:04:05Z","lastMessageAt":"","activity":"idle","activityAt":"2026-01-02T03:04:06Z",` +
		`"lastAnswerAt":"","tokens":{"input":3,"output":5,"cacheRead":0,"cacheWrite":0}`
	misconfigured := `{"name":"standingSessions","declared":false,"description":"","autoStart":false,"harness":"","cwd":"","tmuxTarget":"","ref":"",` +
		`"status":"","running":false,"harnessSessionId":"","slackChannel":"","slackThread":"","startedAt":"","lastMessageAt":"",` +
		`"activity":"","activityAt":"","lastAnswerAt":"","tokens":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},` +
		`"outcome":"misconfigured","detail":"standingSessions.sessions[1].name: 'Beta!'"}`
	service := `{"service":"service","enabled":true,"running":true,"pid":7,"url":"http://127.0.0.1:4114","healthy":true,"mcp":{"enabled":true,"path":"/mcp"}}`
	const control = "POST /api/v1/standing-sessions/control"
	cases := []struct {
		name        string
		call        string // "METHOD path?query"
		reqBody     string
		status      int
		body        string
		ct          string
		wantProblem string // "" when the exchange keeps the contract
	}{
		{"a control result", control, `{"verb":"start"}`, 200, `{"sessions":[` + row + `,"outcome":"started","detail":""}],"ok":true}`, "", ""},
		{"a control result without ok", control, `{"verb":"start"}`, 200, `{"sessions":[]}`, "", `"ok"`},
		{"a control result with a key of its own", control, `{"verb":"stop"}`, 200, `{"sessions":[],"ok":true,"extra":1}`, "", "extra"},
		{"a row without running", "GET /api/v1/standing-sessions", "", 200, `[` + strings.Replace(row, `"running":true,`, "", 1) + `}]`, "", `"running"`},
		{"a row with an unknown status", "GET /api/v1/standing-sessions/one?name=alpha", "", 200, strings.Replace(row, `"status":"running"`, `"status":"starting"`, 1) + `}`, "", "status"},
		{"a row with an unknown activity", "GET /api/v1/standing-sessions/one?name=alpha", "", 200, strings.Replace(row, `"activity":"idle"`, `"activity":"asleep"`, 1) + `}`, "", "activity"},
		{"a row without tokens", "GET /api/v1/standing-sessions", "", 200, `[` + strings.Replace(row, `,"tokens":{"input":3,"output":5,"cacheRead":0,"cacheWrite":0}`, "", 1) + `}]`, "", `"tokens"`},
		{"an error body other than detail", "GET /api/v1/standing-sessions/one?name=nobody", "", 404, `{"message":"no"}`, "", "detail"},
		{"an undeclared status", control, `{"verb":"start"}`, 409, `{"detail":"conflict"}`, "", "409"},
		{"a status report with a misconfigured row", "GET /api/v1/status", "", 200, `{"services":[` + service + `],"standingSessions":[` + misconfigured + `],"ok":false}`, "", ""},
		{"a misconfigured row that claims to run", "GET /api/v1/status", "", 200, `{"services":[` + service + `],"standingSessions":[` +
			strings.Replace(misconfigured, `"running":false`, `"running":true`, 1) + `],"ok":false}`, "", "standingSessions"},
		{"an event", "GET /api/v1/events", "", 200, `[{"ts":"2026-01-02T03:04:05.678Z","source":"service","event":"api.request","level":"info","pid":7,"method":"POST","status":200,"seq":3}]`, "", ""},
		{"an event without seq", "GET /api/v1/events", "", 200, `[{"ts":"2026-01-02T03:04:05.678Z","source":"service","event":"x","level":"info","pid":7}]`, "", "seq"},
		{"an event with a null field", "GET /api/v1/events", "", 200, `[{"ts":"2026-01-02T03:04:05.678Z","source":"service","event":"x","level":"info","pid":7,"error":null,"seq":1}]`, "", "error"},
		{"a refused request answered 200", control, `{"verb":"detonate"}`, 200, `{"sessions":[],"ok":true}`, "", "refuses the request"},
		{"a refused request answered 400", control, `{"verb":"detonate"}`, 400, `{"detail":"unknown verb 'detonate'"}`, "", ""},
		{"a say result with a message of the wrong stream", "POST /api/v1/standing-sessions/say", `{"name":"a","text":"hi"}`, 200,
			`{"name":"a","delivered":false,"exitCode":1,"messages":[{"stream":"stderr","text":"not ready"}]}`, "", "stream"},
		{"a response that is not JSON", "GET /api/v1/health", "", 200, `{"status":"ok","version":"1","pid":1}`, "text/plain", "Content-Type"},
		{"an unknown route answered with an ErrorBody", "GET /api/v1/nope", "", 404, `{"detail":"no route GET /api/v1/nope in the-loop's API"}`, "", ""},
		{"an unknown route answered otherwise", "GET /api/v1/nope", "", 404, `not found`, "", "error body"},
		{"an unknown route answered 200", "GET /api/v1/nope", "", 200, `{}`, "", "no such operation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reports = nil
			answer.status, answer.body, answer.ct = c.status, c.body, cmp.Or(c.ct, "application/json")
			method, path, _ := strings.Cut(c.call, " ")
			var rd io.Reader
			if c.reqBody != "" {
				rd = strings.NewReader(c.reqBody)
			}
			req, err := http.NewRequest(method, stub.URL+path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if c.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != c.body {
				t.Fatalf("the caller read %q, not what was sent", got)
			}
			switch {
			case c.wantProblem == "" && len(reports) > 0:
				t.Fatalf("reported %v", reports)
			case c.wantProblem != "" && len(reports) != 1:
				t.Fatalf("%d reports, want one naming %s", len(reports), c.wantProblem)
			case c.wantProblem != "" && !strings.Contains(reports[0].Error(), c.wantProblem):
				t.Fatalf("report %v does not name %s", reports[0], c.wantProblem)
			}
		})
	}
}

// TestOpenAPI_PollWithoutChannelsKeepsTheContract: a service that hosts no
// channels answers the poll with a skipped summary (checked against the
// file like every other exchange of the fixture). The body may be empty,
// but it is still declared JSON (decisions D24).
func TestOpenAPI_PollWithoutChannelsKeepsTheContract(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	for _, body := range []string{"", "{}"} {
		r := f.post("/api/v1/channels/poll", body)
		var sum map[string]any
		r.decode(t, &sum)
		if r.status != 200 || sum["skipped"] != "channels are not hosted by this service" || sum["delivered"] != float64(0) {
			t.Fatalf("poll with body %q: %d %s", body, r.status, r.body)
		}
	}
}
