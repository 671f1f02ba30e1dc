package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServiceLog_JSONLinesThroughStart: with service.log.format json, the
// service `start` launches writes JSON lines to <state.root>/logs/service.log;
// and doctor finds this state root's service on the port, healthy.
func TestServiceLog_JSONLinesThroughStart(t *testing.T) {
	e, _ := serviceEnv(t, `
state: {root: .the-loop}
service:
  port: %PORT%
  log: {format: json, level: debug}
routing: {tmux: {socketName: %SOCKET%}}
`)
	e.must(0, "start")
	data, err := os.ReadFile(filepath.Join(e.dir, ".the-loop", "logs", "service.log"))
	if err != nil {
		t.Fatal(err)
	}
	listening := false
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a service.log line is not JSON (%v): %s", err, line)
		}
		listening = listening || rec["msg"] == "the-loop service listening"
	}
	if !listening {
		t.Errorf("no listening line in service.log:\n%s", data)
	}
	r := e.run("doctor", "--format", "json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor: %v\n%s", err, r)
	}
	port, svc := rep.find("port"), rep.find("service")
	if len(port) != 1 || port[0].Status != checkOK || !strings.Contains(port[0].Detail, "this state root's service") ||
		len(svc) != 1 || svc[0].Status != checkOK || !strings.Contains(svc[0].Detail, "answers health: ok") {
		t.Errorf("doctor with the service up: port %+v, service %+v", port, svc)
	}
}
