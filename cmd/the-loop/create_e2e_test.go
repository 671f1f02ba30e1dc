package main

import (
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestStandingCreate_RefusalsWriteNothing(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	for _, bad := range []string{"Bad", "-x", "a_b", "has space", strings.Repeat("a", 41), "../escape"} {
		r := e.must(2, "standing", "create", "--cwd", e.dir, "--", bad)
		if !strings.Contains(r.stderr, "invalid standing-session name") {
			t.Errorf("%q: %s", bad, r)
		}
	}
	r := e.must(2, "standing", "create", "supervisor", "--cwd", e.dir)
	if !strings.Contains(r.stderr, "already declared in standingSessions.sessions") {
		t.Fatalf("declared: %s", r)
	}
	e.must(0, "standing", "create", "helper", "--cwd", e.dir, "--no-start")
	r = e.must(2, "standing", "create", "helper", "--cwd", e.dir)
	if !strings.Contains(r.stderr, "already exists") || !strings.Contains(r.stderr, "the-loop standing delete helper") {
		t.Fatalf("recorded: %s", r)
	}
	e.must(2, "standing", "create", "x", "--prompt", "a", "--prompt-file", "b")
	rows := e.rows()
	if len(rows) != 2 || rows["helper"].Status != "stopped" || rows["helper"].Running {
		t.Fatalf("rows %+v", rows)
	}
	if n := len(e.starts()); n != 0 {
		t.Fatalf("%d agents spawned", n)
	}
	if got := eventNames(e.events()); !slices.Equal(got, []string{"standing.created"}) {
		t.Fatalf("events %v", got)
	}
}

func TestStandingCreate_FailedCreateLeavesNoRecord(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	r := e.must(1, "standing", "create", "lost", "--cwd", e.dir+"/nowhere")
	if !strings.Contains(r.stderr, "is not a directory") {
		t.Fatalf("%s", r)
	}
	if _, ok := e.rows()["lost"]; ok {
		t.Fatal("a failed create left a record")
	}
	got := eventNames(e.events("--standing", "lost"))
	if !slices.Equal(got, []string{"standing.created", "standing.spawn_failed", "standing.create_failed"}) {
		t.Fatalf("events %v", got)
	}
}

func TestStandingCreate_AddressedLikeDeclaredThenDeleted(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	r := e.must(0, "standing", "create", "helper", "--cwd", e.dir, "--prompt", "Help out.", "--description", "a helper")
	if !strings.HasPrefix(r.stdout, "helper  started") {
		t.Fatalf("create: %s", r)
	}
	start := e.agent.WaitForKind(t, "start", 10*time.Second)
	if !strings.HasSuffix(start.Prompt, "---\n\nHelp out.") || !strings.HasPrefix(start.Prompt, "You are **helper**") {
		t.Fatalf("prompt %q", start.Prompt)
	}
	row := e.rows()["helper"]
	if row.Declared || !row.AutoStart || row.Description != "a helper" || !row.Running {
		t.Fatalf("row %+v", row)
	}
	e.must(0, "standing", "stop", "helper")
	r = e.must(0, "standing", "restart", "helper")
	if !strings.HasPrefix(r.stdout, "helper  resumed") {
		t.Fatalf("restart: %s", r)
	}
	waitFor(t, "the prompt", func() bool {
		s, _ := e.tmux("capture-pane", "-p", "-t", "=loop-standing-helper:")
		return strings.Contains(s, "❯")
	})
	e.must(0, "standing", "say", "helper", "--text", "hi")

	r = e.must(2, "standing", "delete", "supervisor")
	if !strings.Contains(r.stderr, "standingSessions.sessions") || !strings.Contains(r.stderr, "the-loop standing stop supervisor") {
		t.Fatalf("delete declared: %s", r)
	}
	e.must(1, "standing", "delete", "nobody")
	r = e.must(0, "standing", "delete", "helper")
	if !strings.HasPrefix(r.stdout, "helper  deleted") || !strings.Contains(r.stdout, "stopped and forgot loop-standing-helper") {
		t.Fatalf("delete: %s", r)
	}
	if e.alive("loop-standing-helper") {
		t.Fatal("delete left the agent running")
	}
	if _, ok := e.rows()["helper"]; ok {
		t.Fatal("delete left the record")
	}
	// A deleted session does not come back on an unnamed start.
	e.must(0, "standing", "start")
	if rows := e.rows(); len(rows) != 1 {
		t.Fatalf("rows after start %+v", rows)
	}
}

func TestStandingStart_EightConcurrentStartsSpawnOnce(t *testing.T) {
	e := newEnv(t)
	e.config(oneSession)
	var wg sync.WaitGroup
	results := make([]result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.run("standing", "start", "supervisor")
		}()
	}
	wg.Wait()
	var outcomes []string
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("a start failed: %s", r)
		}
		outcomes = append(outcomes, strings.Fields(r.stdout)[1])
	}
	slices.Sort(outcomes)
	want := append(slices.Repeat([]string{"already-running"}, 7), "started")
	if !slices.Equal(outcomes, want) {
		t.Fatalf("outcomes %v", outcomes)
	}
	e.agent.WaitForKind(t, "start", 10*time.Second)
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d agents spawned", n)
	}
}

func TestStandingStart_KilledMidProbeRecovers(t *testing.T) {
	e := newEnv(t)
	e.config(strings.Replace(oneSession, "resumeProbeSeconds: 1", "resumeProbeSeconds: 30", 1))
	e.must(0, "standing", "start")
	e.agent.WaitForKind(t, "start", 10*time.Second)
	e.must(0, "standing", "stop")

	// The resume is spawned, then the start is killed during its probe.
	cmd := e.command("standing", "start")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resumed agent", func() bool { return len(e.starts()) == 2 })
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if ee, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ee.Signaled() {
		t.Fatalf("the start was not killed: %v", cmd.ProcessState)
	}

	r := e.must(0, "standing", "start")
	if !strings.Contains(r.stdout, "supervisor  already-running") {
		t.Fatalf("start after the kill: %s", r)
	}
	if n := len(e.starts()); n != 2 {
		t.Fatalf("%d agents spawned", n)
	}
	row := e.rows()["supervisor"]
	if row.Status != "running" || !row.Running || row.HarnessSessionID != e.starts()[1].SessionID {
		t.Fatalf("row %+v", row)
	}
	e.must(0, "standing", "stop")
	if e.alive("loop-standing-supervisor") {
		t.Fatal("stop after recovery left the agent")
	}
}
