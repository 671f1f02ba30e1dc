package main

import (
	"context"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// asServiceSees marks a check the running service made in its own
// environment.
const asServiceSees = " (as the service sees it)"

// environmentChecks are doctor's tmux and harness checks. When this state
// root's service answers they are the service's (it spawns every agent, in
// the environment it was started with), each saying so, followed by a
// warning for each binary that this shell's PATH lacks — `the-loop restart`
// and the verbs that run without the service spawn agents here. Without a
// service they are this shell's own.
func (a *App) environmentChecks(cfg *config.Config) (tmux, harnesses []check) {
	own := append([]check{doctorTmux()}, doctorHarnesses(cfg)...)
	seen, ok := a.serviceEnvironment(cfg)
	if !ok {
		return own[:1], own[1:]
	}
	mine := map[string]check{}
	for _, ch := range own {
		mine[ch.Check] = ch
	}
	for _, sc := range seen.Checks {
		ch := check(sc)
		ch.Detail += asServiceSees
		out := &harnesses
		if ch.Check == "tmux" {
			out = &tmux
		}
		*out = append(*out, ch)
		if m, found := mine[sc.Check]; found && m.Status == checkProblem && sc.Status != checkProblem {
			*out = append(*out, check{Check: sc.Check, Status: checkWarning,
				Detail: "not found in this shell: " + m.Detail + " — `the-loop restart`, and every verb while the service is stopped, spawns agents in this environment",
				Remedy: m.Remedy})
		}
	}
	return tmux, harnesses
}

// serviceEnvironment asks this state root's service, when it answers, for
// its view of its environment (ok false when none answers, or it cannot
// say: an older service, a refused token).
func (a *App) serviceEnvironment(cfg *config.Config) (loop.Environment, bool) {
	if !cfg.Service.Enabled {
		return loop.Environment{}, false
	}
	if st := a.probe(cfg, 2*time.Second); !st.ours {
		return loop.Environment{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env, err := a.client(cfg).Environment(ctx)
	if err != nil || !hasTmuxCheck(env) {
		return loop.Environment{}, false
	}
	return env, true
}

// hasTmuxCheck reports whether env holds the tmux check every service's
// answer begins with.
func hasTmuxCheck(env loop.Environment) bool {
	return len(env.Checks) > 0 && strings.HasPrefix(env.Checks[0].Check, "tmux")
}
