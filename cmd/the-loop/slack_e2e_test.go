package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/the-loop-dev/the-loop/channels/slack/fakeslack"
	"github.com/the-loop-dev/the-loop/internal/testkit"
)

// slackToken is the bot token the fake workspace accepts; it must never
// surface in anything the-loop writes or prints.
const slackToken = "xoxb-e2e-4242-TOKEN-must-not-leak"

// slackSession declares supervisor with Slack on in its own channel COWN
// (central channel CCENTRAL; member UOPS admitted). %SLACK% is the fake
// workspace's URL, %SERVICE% the service block.
const slackSession = `
state: {root: .the-loop}
service: %SERVICE%
routing:
  tmux: {socketName: %SOCKET%, harnessKillGraceSeconds: 3, resumeProbeSeconds: 1}
channels:
  slack:
    enabled: true
    apiUrl: %SLACK%
    channel: CCENTRAL
    authorizedUsers: [UOPS]
    read: {mode: poll, intervalSeconds: %INTERVAL%}
standingSessions:
  enabled: true
  sessions:
    - name: supervisor
      cwd: %DIR%
      prompt: Watch the work items.
      slack: {enabled: true, channel: COWN}
`

// slackEnv is an end-to-end world with a fake Slack workspace in this
// process, which the-loop reaches over 127.0.0.1.
type slackEnv struct {
	*env
	ws      *fakeslack.Workspace
	outputs []string // everything the-loop printed, for the token check
}

func newSlackEnv(t *testing.T) *slackEnv {
	t.Helper()
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", slackToken)
	return &slackEnv{env: newEnv(t), ws: fakeslack.New(t, slackToken)}
}

// slackConfig writes slackSession with the service block and poll interval.
func (s *slackEnv) slackConfig(service string, interval int) {
	y := strings.ReplaceAll(slackSession, "%SLACK%", s.ws.URL())
	y = strings.ReplaceAll(y, "%SERVICE%", service)
	y = strings.ReplaceAll(y, "%INTERVAL%", strconv.Itoa(interval))
	s.config(y)
}

// must is env.must, remembering the output.
func (s *slackEnv) must(code int, args ...string) result {
	s.t.Helper()
	r := s.env.must(code, args...)
	s.outputs = append(s.outputs, r.stdout, r.stderr)
	return r
}

// poll runs `channels poll` and returns its one line.
func (s *slackEnv) poll() string {
	s.t.Helper()
	return strings.TrimSpace(s.must(0, "channels", "poll").stdout)
}

// waitReady waits until the named session's agent drew its prompt.
func (s *slackEnv) waitReady(name string) {
	s.t.Helper()
	waitFor(s.t, name+"'s prompt", func() bool {
		screen, _ := s.tmux("capture-pane", "-p", "-t", "=loop-standing-"+name+":")
		return strings.Contains(screen, "❯")
	})
}

// assertNoToken checks every output, the state root's files (store, logs)
// and the event log for the token.
func (s *slackEnv) assertNoToken(extra ...string) {
	s.t.Helper()
	for i, out := range append(s.outputs, extra...) {
		if strings.Contains(out, slackToken) {
			s.t.Fatalf("output %d holds the token:\n%s", i, out)
		}
	}
	_ = filepath.WalkDir(filepath.Join(s.dir, ".the-loop"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(slackToken)) {
			s.t.Fatalf("%s holds the token", p)
		}
		return nil
	})
	raw, _ := json.Marshal(s.events())
	if bytes.Contains(raw, []byte(slackToken)) {
		s.t.Fatal("the event log holds the token")
	}
	// The agents never inherit it: the fake logs its THE_LOOP_* environment.
	for _, start := range s.agent.Entries("start") {
		if _, ok := start.Env["THE_LOOP_SLACK_BOT_TOKEN"]; ok {
			s.t.Fatalf("agent pid %d inherited the bot token", start.Pid)
		}
	}
}

func fromSlack(name, member, text string) string {
	return fmt.Sprintf("Message from your operator (slack:%s) to standing session `%s`:\n\n%s", member, name, text)
}

// Without the service: start → one post in the
// entry's channel; an authorized reply is pasted framed, once; bots,
// the bot itself and strangers are dropped; stop/start keeps the thread.
func TestSlack_AnnounceThenAuthorizedReplyIsPastedOnce(t *testing.T) {
	s := newSlackEnv(t)
	s.slackConfig("{enabled: false}", 30)
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")

	posts := s.ws.Posts()
	if len(posts) != 1 || posts[0].Channel != "COWN" || !strings.HasPrefix(posts[0].Text, "the-loop: standing.started on standing:supervisor\n\n") {
		t.Fatalf("posts %+v", posts)
	}
	thread := posts[0].TS
	if row := s.rows()["supervisor"]; row.SlackThread != thread || row.SlackChannel != "COWN" {
		t.Fatalf("row %+v", row)
	}
	ann := s.events("--type", "standing.announced")
	if len(ann) != 1 || ann[0].Field("channel") != "COWN" || ann[0].Field("thread") != thread {
		t.Fatalf("standing.announced %+v", ann)
	}

	s.ws.Reply("COWN", thread, "UOPS", "status report, please")
	s.ws.Reply("COWN", thread, "UEVIL", "rm -rf ~")
	s.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, User: fakeslack.BotUserID, Text: "the bot itself"})
	s.ws.Add(fakeslack.Message{Channel: "COWN", ThreadTS: thread, User: "UOPS", BotID: "BOTHER", Text: "an app"})
	if got := s.poll(); got != "4 repl(ies): 1 processed (1 delivered), 3 dropped" {
		t.Fatalf("poll: %q", got)
	}
	waitFor(t, "the reply in the pane", func() bool { return len(s.agent.Messages()) == 1 })
	if got := s.agent.Messages()[0]; got != fromSlack("supervisor", "UOPS", "status report, please") {
		t.Fatalf("pane got %q", got)
	}
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("second poll: %q", got)
	}
	var got []string
	for _, ev := range s.events("--type", "channel.*") {
		got = append(got, fmt.Sprintf("%s %v %v", ev.Event, ev.Field("reason"), ev.Field("actor")))
	}
	want := []string{
		"channel.reply_received <nil> UOPS",
		"channel.mirror_skipped standing-session <nil>",
		"channel.dropped unauthorized-actor UEVIL",
		"channel.dropped self-authored <nil>",
		"channel.dropped self-authored <nil>",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("channel events:\n%s", strings.Join(got, "\n"))
	}
	if said := s.events("--type", "standing.said"); len(said) != 1 || said[0].Field("actor") != "slack:UOPS" {
		t.Fatalf("standing.said %+v", said)
	}

	// Start, stop, start: still one post, same thread.
	s.must(0, "standing", "stop", "supervisor")
	r := s.must(0, "standing", "start", "supervisor")
	if !strings.HasPrefix(r.stdout, "supervisor  resumed") || len(s.ws.Posts()) != 1 || s.rows()["supervisor"].SlackThread != thread {
		t.Fatalf("restart: %s posts %d", r, len(s.ws.Posts()))
	}
	if n := len(s.agent.Messages()); n != 1 {
		t.Fatalf("%d messages in the pane, want 1", n)
	}

	st := s.must(0, "channels", "status").stdout
	for _, line := range []string{"slack:            enabled", "channel:          CCENTRAL", "bot token:        present in THE_LOOP_SLACK_BOT_TOKEN", "authorized users: UOPS"} {
		if !strings.Contains(st, line) {
			t.Fatalf("channels status lacks %q:\n%s", line, st)
		}
	}
	s.assertNoToken()
}

// Through the service (decisions D22): a thread longer than
// a page is delivered whole and in order; a crash and restart of the
// service delivers nothing twice; the service's own loop polls.
func TestSlack_ThroughTheServiceAcrossACrashEachReplyOnce(t *testing.T) {
	s := newSlackEnv(t)
	port := freePort(t)
	service := fmt.Sprintf("{host: 127.0.0.1, port: %d}", port)
	s.slackConfig(service, 3600)
	serve := s.serve(port)
	s.must(0, "standing", "start", "supervisor")
	s.waitReady("supervisor")
	posts := s.ws.Posts()
	if len(posts) != 1 || posts[0].Channel != "COWN" {
		t.Fatalf("posts %+v", posts)
	}
	thread := posts[0].TS

	s.ws.SetPageSize(2)
	var want []string
	for i := range 5 {
		text := fmt.Sprintf("reply %d", i+1)
		s.ws.Reply("COWN", thread, "UOPS", text)
		want = append(want, fromSlack("supervisor", "UOPS", text))
	}
	if got := s.poll(); got != "5 repl(ies): 5 processed (5 delivered), 0 dropped" {
		t.Fatalf("poll through the service: %q", got)
	}
	waitFor(t, "five replies", func() bool { return len(s.agent.Messages()) == 5 })
	if got := s.agent.Messages(); !slices.Equal(got, want) {
		t.Fatalf("pane got %q", got)
	}
	// channels status says whose environment it reports, and asks the
	// service whether it sees the token.
	var cs struct {
		Environment         string `json:"environment"`
		ServiceTokenPresent *bool  `json:"serviceTokenPresent"`
	}
	if st := s.must(0, "channels", "status", "--format", "json").stdout; json.Unmarshal([]byte(st), &cs) != nil ||
		cs.Environment != "cli" || cs.ServiceTokenPresent == nil || !*cs.ServiceTokenPresent {
		t.Fatalf("channels status through the service: %s", st)
	}

	// The service dies without a word; the next one has the same cursor.
	serve.kill(syscall.SIGKILL)
	s.slackConfig(service, 5) // its loop polls every 5 s
	serve = s.serve(port)
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("poll after the crash: %q", got)
	}
	s.ws.Reply("COWN", thread, "UOPS", "found by the loop")
	waitFor(t, "the service's loop to deliver", func() bool { return len(s.agent.Messages()) == 6 })
	serve.kill(syscall.SIGTERM)
	if got := s.agent.Messages(); len(got) != 6 || got[5] != fromSlack("supervisor", "UOPS", "found by the loop") {
		t.Fatalf("pane got %q", got)
	}
	if n := len(s.events("--type", "channel.reply_received")); n != 6 {
		t.Fatalf("%d replies recorded, want 6", n)
	}
	if posts := s.ws.Posts(); len(posts) != 1 {
		t.Fatalf("%d posts", len(posts))
	}
	s.assertNoToken(serve.logs())
}

// Delete, then create the name again → a new thread; the old
// thread is no longer read.
func TestSlack_DeleteThenRecreateGetsANewThread(t *testing.T) {
	s := newSlackEnv(t)
	s.slackConfig("{enabled: false}", 30)
	s.must(0, "standing", "create", "helper", "--cwd", s.dir, "--slack")
	old := s.ws.Posts()
	if len(old) != 1 || old[0].Channel != "CCENTRAL" {
		t.Fatalf("posts %+v", old)
	}
	s.must(0, "standing", "delete", "helper")
	s.must(0, "standing", "create", "helper", "--cwd", s.dir, "--slack")
	posts := s.ws.Posts()
	if len(posts) != 2 || posts[1].TS == old[0].TS || posts[1].ThreadTS != "" {
		t.Fatalf("posts %+v", posts)
	}
	if row := s.rows()["helper"]; row.SlackThread != posts[1].TS {
		t.Fatalf("row %+v", row)
	}
	s.waitReady("helper")
	s.ws.Reply("CCENTRAL", old[0].TS, "UOPS", "to the deleted one")
	s.ws.Reply("CCENTRAL", posts[1].TS, "UOPS", "to the new one")
	if got := s.poll(); got != "2 repl(ies): 1 processed (1 delivered), 1 dropped" {
		t.Fatalf("poll: %q", got)
	}
	waitFor(t, "the reply", func() bool { return len(s.agent.Messages()) == 1 })
	if got := s.agent.Messages(); got[0] != fromSlack("helper", "UOPS", "to the new one") {
		t.Fatalf("pane got %q", got)
	}
	// The old thread's reply is dropped as unmapped, once.
	drops := s.events("--type", "channel.dropped")
	if len(drops) != 1 || drops[0].Field("reason") != "unmapped" || drops[0].Field("thread") != old[0].TS {
		t.Fatalf("drops %+v", drops)
	}
	if got := s.poll(); got != "0 repl(ies): 0 processed (0 delivered), 0 dropped" {
		t.Fatalf("second poll: %q", got)
	}
	s.assertNoToken()
}

// A failed post never stops the session, and neither
// the failure nor `channels status` shows the token.
func TestSlack_PostFailureStartsTheSessionAnyway(t *testing.T) {
	s := newSlackEnv(t)
	s.slackConfig("{enabled: false}", 30)
	s.ws.FailPosts("not_in_channel")
	r := s.must(0, "standing", "start", "supervisor")
	if !strings.HasPrefix(r.stdout, "supervisor  started") {
		t.Fatalf("start: %s", r)
	}
	evs := s.events("--type", "standing.announce_failed")
	if len(evs) != 1 || evs[0].Level != "warning" || evs[0].Field("error") != "slack: post failed: not_in_channel" {
		t.Fatalf("announce_failed %+v", evs)
	}
	if row := s.rows()["supervisor"]; !row.Running || row.SlackThread != "" {
		t.Fatalf("row %+v", row)
	}
	st := s.must(0, "channels", "status", "--format", "json").stdout
	var status struct {
		TokenPresent bool   `json:"tokenPresent"`
		BotTokenEnv  string `json:"botTokenEnv"`
	}
	if err := json.Unmarshal([]byte(st), &status); err != nil || !status.TokenPresent || status.BotTokenEnv != "THE_LOOP_SLACK_BOT_TOKEN" {
		t.Fatalf("status json %s (%v)", st, err)
	}
	s.assertNoToken()
}

func TestChannels_StatusAndPollSkips(t *testing.T) {
	s := newSlackEnv(t)
	s.config(`
service: {enabled: false}
channels:
  slack: {enabled: true, read: {mode: socket}}
`)
	st := s.must(0, "channels", "status").stdout
	if !strings.Contains(st, "read mode:        socket — unsupported") || !strings.Contains(st, "authorized users: none") ||
		!strings.Contains(st, "(in this CLI's environment)") || !strings.Contains(st, "service:          disabled") {
		t.Fatalf("status:\n%s", st)
	}
	r := s.env.must(1, "channels", "poll")
	if !strings.HasPrefix(r.stdout, "skipped: channels.slack.read.mode is socket") {
		t.Fatalf("poll: %s", r)
	}
	t.Setenv("THE_LOOP_SLACK_BOT_TOKEN", "")
	s.config("service: {enabled: false}\n")
	if st := s.must(0, "channels", "status").stdout; !strings.Contains(st, "bot token:        missing — export THE_LOOP_SLACK_BOT_TOKEN") || !strings.Contains(st, "slack:            disabled") {
		t.Fatalf("status:\n%s", st)
	}
	r = s.env.must(1, "channels", "poll")
	if strings.TrimSpace(r.stdout) != "skipped: Slack is disabled (channels.slack.enabled is false)" {
		t.Fatalf("poll: %s", r)
	}
}

// served is a `the-loop serve` the test runs in the foreground.
type served struct {
	t    testing.TB
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// serve runs `the-loop serve` and waits for its health on port.
func (s *slackEnv) serve(port int) *served {
	s.t.Helper()
	cmd := s.command("serve")
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	sv := &served{t: s.t, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(sv.done) }()
	s.t.Cleanup(func() { sv.kill(syscall.SIGKILL) })
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/health", port)
	waitFor(s.t, "the service's health", func() bool {
		select {
		case <-sv.done:
			s.t.Fatalf("the service exited:\n%s", out)
		default:
		}
		resp, err := nethttp.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return sv
}

// kill signals the service and waits for it to exit.
func (sv *served) kill(sig syscall.Signal) {
	select {
	case <-sv.done:
		return
	default:
	}
	_ = sv.cmd.Process.Signal(sig)
	if _, ok := testkit.AwaitOK(sv.t, sv.done); !ok {
		_ = sv.cmd.Process.Kill()
		<-sv.done
		sv.t.Errorf("the service did not exit on %v", sig)
	}
}

// logs is what the service wrote (once it has exited).
func (sv *served) logs() string {
	<-sv.done
	return sv.out.String()
}
