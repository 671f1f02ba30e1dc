package http

import (
	"context"
	"reflect"
	"testing"

	loop "github.com/the-loop-dev/the-loop"
)

// TestEnvironment_TheServiceReportsItsOwnView: GET /api/v1/environment is
// what the service found in its environment, as the contract says, through
// the SDK too; it needs the operator's token; a service that cannot say
// answers 404.
func TestEnvironment_TheServiceReportsItsOwnView(t *testing.T) {
	want := loop.Environment{PID: 4242, Path: "/opt/agents/bin:/usr/bin", Checks: []loop.EnvironmentCheck{
		{Check: "tmux", Status: "ok", Detail: "tmux 3.4 (/usr/bin/tmux)"},
		{Check: "harness codex", Status: "problem", Detail: "'codex' not found on PATH (/opt/agents/bin:/usr/bin)", Remedy: "install it"},
	}}
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir(), environment: func(context.Context) loop.Environment { return want }})
	var got loop.Environment
	r := f.get("/api/v1/environment")
	r.decode(t, &got)
	if r.status != 200 || !reflect.DeepEqual(got, want) {
		t.Fatalf("GET /api/v1/environment: %d %s", r.status, r.body)
	}
	viaSDK, err := f.client.Environment(context.Background())
	if err != nil || !reflect.DeepEqual(viaSDK, want) {
		t.Fatalf("sdk: %+v %v", viaSDK, err)
	}
	if r := f.request("GET", "/api/v1/environment", "", withoutToken()); r.status != 401 {
		t.Fatalf("without the token: %d %s", r.status, r.body)
	}
	bare := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	if r := bare.get("/api/v1/environment"); r.status != 404 {
		t.Fatalf("a service without an environment report: %d %s", r.status, r.body)
	}
}
