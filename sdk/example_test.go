package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/harness"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/internal/optoken"
	"github.com/the-loop-dev/the-loop/lifecycle"
	"github.com/the-loop-dev/the-loop/runner"
	"github.com/the-loop-dev/the-loop/sdk"
	"github.com/the-loop-dev/the-loop/store"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// serveForExample runs the-loop's REST service as `the-loop serve` does —
// over a real bbolt file in a temporary directory, with a config that
// declares no sessions — on 127.0.0.1, and returns its URL. Nothing is
// started, so no agent or tmux session is needed.
func serveForExample() (url, stateRoot string, stop func()) {
	dir, err := os.MkdirTemp("", "the-loop-sdk-example-")
	if err != nil {
		log.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "cli-config.yaml")
	yaml := fmt.Sprintf("state:\n  root: %s\nrouting:\n  tmux:\n    socketName: the-loop-sdk-example-%d\n", filepath.Join(dir, "state"), os.Getpid())
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		log.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		log.Fatal(err)
	}
	db, err := store.Open(filepath.Join(cfg.StateDir(), "the-loop.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	svc := &lifecycle.Service{
		DB: db,
		Runner: func(socket string) loop.Runner {
			return runner.New(runner.Options{Socket: socket, ConfigFile: os.DevNull, LockDir: filepath.Join(dir, "locks")})
		},
		Harness:  harness.NewRegistry(harness.ClaudeOptions{Home: dir}).Lookup,
		LookPath: exec.LookPath,
		Source:   "service",
	}
	// The operator's token, as `the-loop serve` makes it at its first start.
	token, err := optoken.EnsureTokenFile(cfg.StateDir())
	if err != nil {
		log.Fatal(err)
	}
	current := func() *config.Config { return cfg }
	server := loophttp.NewServer(loophttp.Options{
		Standing: svc.Standing(current), WorkItems: svc.WorkItems(current), Events: svc, Recorder: svc,
		Poller: &channels.Poller{Threads: &threadlog.Log{DB: db, Events: svc}, Standing: svc.Standing(current)},
		Config: current, Version: "example", Token: token,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Serve(ln) }()
	return "http://" + ln.Addr().String(), cfg.StateDir(), func() {
		_ = server.Shutdown(context.Background())
		<-done
		db.Close()
		os.RemoveAll(dir)
	}
}

// A program manages standing sessions through the service: define one at
// runtime, read the rows, tell refusals apart by kind, read the event log.
func Example_standing() {
	url, stateRoot, stop := serveForExample()
	defer stop()
	ctx := context.Background()

	// The SDK never reads the CLI config: it takes the token (WithToken),
	// the state root whose service.token to read (WithStateRoot), or
	// $THE_LOOP_TOKEN.
	client := sdk.New(url, sdk.WithStateRoot(stateRoot))
	res, err := client.Standing.Create(ctx, sdk.CreateOptions{
		Name:        "nightly",
		Description: "triages the nightly build",
		NoAutoStart: true, // not part of `the-loop start`
		NoStart:     true, // record it; start it later with Control
	}.Request())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", res.Sessions[0].Name, res.Sessions[0].Status, res.OK)

	rows, err := client.Standing.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rows {
		fmt.Printf("row: %s (%s, %s): %s\n", r.Name, r.Origin, r.Status, r.Description)
	}

	_, err = client.Standing.Get(ctx, "nobody")
	fmt.Println("not found:", errors.Is(err, sdk.ErrNotFound))
	_, err = client.Standing.Control(ctx, loop.StandingControlRequest{Name: "nightly", Verb: "detonate"})
	fmt.Println("invalid:", errors.Is(err, sdk.ErrInvalid), "—", err)

	evs, err := client.Events(ctx, sdk.EventsQuery{Types: []string{"standing.*"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range evs {
		fmt.Println("event:", e.Event, e.Field("standing"))
	}

	rep, err := client.Status(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status ok:", rep.OK)
	// Output:
	// created: nightly stopped true
	// row: nightly (created, stopped): triages the nightly build
	// not found: true
	// invalid: true — unknown verb 'detonate' (one of start, stop, restart)
	// event: standing.created nightly
	// status ok: true
}

// Work-item sessions: list them, and tell a work item with no session
// apart from a ref that is not a work item's.
func Example_workItems() {
	url, stateRoot, stop := serveForExample()
	defer stop()
	ctx := context.Background()
	client := sdk.New(url, sdk.WithStateRoot(stateRoot))

	rows, err := client.WorkItems.List(ctx, "active")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("active sessions:", len(rows))

	_, err = client.WorkItems.Get(ctx, "github:octo/repo#15")
	fmt.Println("no session:", errors.Is(err, sdk.ErrNotFound))
	_, err = client.WorkItems.Reply(ctx, loop.WorkItemReplyRequest{Ref: "standing:nightly", Text: "hi", Actor: "ops"})
	fmt.Println("not a work item:", errors.Is(err, sdk.ErrInvalid))
	closed, err := client.WorkItems.Close(ctx, loop.WorkItemCloseRequest{Ref: "github:octo/repo#15"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("closed:", closed.Closed)
	// Output:
	// active sessions: 0
	// no session: true
	// not a work item: true
	// closed: false
}

// The event log: read what happened, then follow it by sequence number.
func Example_events() {
	url, stateRoot, stop := serveForExample()
	defer stop()
	ctx := context.Background()
	client := sdk.New(url, sdk.WithStateRoot(stateRoot))

	for _, name := range []string{"one", "two"} {
		if _, err := client.Standing.Create(ctx, sdk.CreateOptions{Name: name, NoStart: true}.Request()); err != nil {
			log.Fatal(err)
		}
	}
	q := sdk.EventsQuery{Types: []string{"standing.created"}}
	evs, err := client.Events(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", len(evs), evs[0].Field("standing"), evs[1].Field("standing"))

	// Follow: ask for the events after the last one seen.
	q.After = evs[len(evs)-1].Seq
	if _, err := client.Standing.Create(ctx, sdk.CreateOptions{Name: "three", NoStart: true}.Request()); err != nil {
		log.Fatal(err)
	}
	more, err := client.Events(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("then:", len(more), more[0].Field("standing"))

	_, err = client.Events(ctx, sdk.EventsQuery{Level: "loud"})
	fmt.Println("bad level:", errors.Is(err, sdk.ErrInvalid))
	// Output:
	// created: 2 one two
	// then: 1 three
	// bad level: true
}

// Channels: run one inbound Slack poll cycle now; a cycle that did nothing
// says why.
func Example_channels() {
	url, stateRoot, stop := serveForExample()
	defer stop()
	ctx := context.Background()
	client := sdk.New(url, sdk.WithStateRoot(stateRoot))

	sum, err := client.Channels.Poll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("skipped:", sum.Skipped)
	fmt.Println("replies:", sum.Replies)
	// Output:
	// skipped: Slack is disabled (channels.slack.enabled is false)
	// replies: 0
}
