package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/the-loop-dev/the-loop/sdk"
)

// BenchmarkStandingList50Channels lists 50 running sessions through the
// service: the CLI's `standing list` (over the socket), and one typed
// List over each channel — the socket (sdk.Local, the peer's credentials
// read per connection) and TCP (sdk.New with the operator's token). The
// socket is to be no slower than TCP.
func BenchmarkStandingList50Channels(b *testing.B) {
	port := freePort(b)
	e := benchEnvService(b, 50, "1", port)
	if r := e.run("start"); r.code != 0 {
		b.Fatalf("start: %s", r)
	}
	root := filepath.Join(e.dir, ".the-loop")
	waitFor(b, "50 sessions running", func() bool {
		return strings.Count(benchRun(b, e, "standing", "list").stdout, "running  yes") == 50
	})
	b.Run("cli-socket", func(b *testing.B) {
		var s cliStats
		for b.Loop() {
			if out := s.run(b, e, "standing", "list"); strings.Count(out, "running  yes") != 50 {
				b.Fatalf("list:\n%s", out)
			}
		}
		b.StopTimer()
		s.report(b)
	})
	clients := map[string]*sdk.Client{
		"sdk-socket": sdk.Local(root),
		"sdk-tcp":    sdk.New(fmt.Sprintf("http://127.0.0.1:%d", port), sdk.WithStateRoot(root)),
	}
	for _, name := range []string{"sdk-socket", "sdk-tcp"} {
		c := clients[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				rows, err := c.Standing.List(ctx)
				cancel()
				if err != nil || len(rows) != 50 {
					b.Fatalf("list over %s: %d rows, %v", name, len(rows), err)
				}
			}
		})
	}
}
