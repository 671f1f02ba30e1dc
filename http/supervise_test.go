package http

import (
	"strings"
	"testing"
)

// TestStanding_CreateTakesARestartPolicy: a create's body carries restart;
// an unknown policy is a 400 naming it, a wrong type a 422.
func TestStanding_CreateTakesARestartPolicy(t *testing.T) {
	f := newFixture(t, fixtureOptions{agentBin: t.TempDir()})
	if r := f.post("/api/v1/standing-sessions/create", `{"name":"beta","start":false,"restart":"sometimes"}`); r.status != 400 || !strings.Contains(string(r.body), "sometimes") {
		t.Fatalf("unknown policy: %d %s", r.status, r.body)
	}
	if r := f.post("/api/v1/standing-sessions/create", `{"name":"beta","start":false,"restart":3}`); r.status != 422 {
		t.Fatalf("a number: %d %s", r.status, r.body)
	}
	if r := f.post("/api/v1/standing-sessions/create", `{"name":"beta","start":false,"restart":"never"}`); r.status != 200 {
		t.Fatalf("never: %d %s", r.status, r.body)
	}
	if r := f.get("/api/v1/standing-sessions"); r.status != 200 || !strings.Contains(string(r.body), `"supervised":false`) || !strings.Contains(string(r.body), `"lastExit":null`) {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
}
