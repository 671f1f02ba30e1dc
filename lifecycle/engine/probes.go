package engine

import (
	"context"
	"sync"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// Resume probes that share tmux queries. A start-all of fifty resumes
// probes fifty panes at once for resumeProbeSeconds; polled one by one
// (has-session, then the pane's #{pane_dead}) that is two tmux processes per
// pane every poll — a thousand a second at fifty, the larger part of a
// start-all's CPU. Instead each poll joins a round: one runner.States call
// (list-panes -a) answers every pane polled within probeGather of the
// round's first, and the polls are aligned on probeTick so that concurrent
// probes land in the same rounds.
const (
	probeTick   = 100 * time.Millisecond
	probeGather = 5 * time.Millisecond
)

// probeRounds are the rounds gathering polls, by tmux socket.
type probeRounds struct {
	mu   sync.Mutex
	open map[string]*probeRound
}

// probeRound is one shared query; states is set before done is closed.
type probeRound struct {
	targets map[string]bool // guarded by probeRounds.mu while the round is open
	done    chan struct{}
	states  map[string]loop.PaneState
}

// state is target's pane state from the round open for socket (runner
// queries it), or unknown when ctx ends first.
func (p *probeRounds) paneState(ctx context.Context, runner loop.Runner, socket, target string) loop.PaneState {
	p.mu.Lock()
	if p.open == nil {
		p.open = map[string]*probeRound{}
	}
	rd := p.open[socket]
	if rd == nil {
		rd = &probeRound{targets: map[string]bool{}, done: make(chan struct{})}
		p.open[socket] = rd
		go p.run(runner, socket, rd)
	}
	rd.targets[target] = true
	p.mu.Unlock()
	select {
	case <-rd.done:
		if st, ok := rd.states[target]; ok {
			return st
		}
		return loop.PaneUnknown
	case <-ctx.Done():
		return loop.PaneUnknown
	}
}

// run closes the round after probeGather and answers it with one query
// (which outlives a poller that gives up: others wait on it).
func (p *probeRounds) run(runner loop.Runner, socket string, rd *probeRound) {
	time.Sleep(probeGather)
	p.mu.Lock()
	if p.open[socket] == rd {
		delete(p.open, socket)
	}
	targets := make([]string, 0, len(rd.targets))
	for t := range rd.targets {
		targets = append(targets, t)
	}
	p.mu.Unlock()
	rd.states = runner.States(context.Background(), targets)
	close(rd.done)
}

// nextProbe is how long until the next aligned poll: the probeTick
// boundary half a tick or more away (so polls are 50–150 ms apart).
func nextProbe(now time.Time) time.Duration {
	return now.Add(probeTick / 2).Truncate(probeTick).Add(probeTick).Sub(now)
}
