package hearing

import (
	"context"
	"slices"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/store"
)

// The hook identity: which session an agent is, by the pane its process
// runs in (AgentOfProcess, loop.PaneAgents: a socket peer or a hook
// command) or by the credential its spawn was given (AgentFor,
// loop.AgentAuthenticator).

// paneAgentWait bounds the tmux queries of one AgentOfProcess.
const paneAgentWait = time.Second

// paneOwner is a session whose agent may be running, with where its panes
// live.
type paneOwner struct {
	id     loop.AgentIdentity
	socket string // its tmux server's -L name
	target string // its tmux session
}

// AgentOfProcess implements loop.PaneAgents: the standing session that
// runs (or whose start is in flight), or the work-item session that is
// active (or starting), one of whose panes' pids is in chain. One
// `list-panes -a` per tmux server the sessions use (the runner's
// AllPanePIDs); without a Runner nobody is an agent.
func (s *Hearer) AgentOfProcess(ctx context.Context, chain []int) (loop.AgentIdentity, bool) {
	if s.Runner == nil || s.DB == nil || len(chain) == 0 {
		return loop.AgentIdentity{}, false
	}
	var owners []paneOwner
	_ = s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.Status == loop.StatusRunning || r.Claim != nil && r.Claim.Op == "start" {
				owners = append(owners, paneOwner{loop.AgentIdentity{Standing: r.Name, HarnessSessionID: r.HarnessSessionID}, r.TmuxSocket, loop.TmuxTargetFor(r.Name)})
			}
		}
		items, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		for _, r := range items {
			ref, err := loop.ParseWorkItemRef(r.WorkItem.Ref)
			if err == nil && (r.Status == loop.SessionActive || r.Claim != nil && r.Claim.Op == "start") {
				owners = append(owners, paneOwner{loop.AgentIdentity{WorkItem: r.WorkItem.Ref, HarnessSessionID: r.HarnessSessionID}, r.TmuxSocket, ref.TmuxTarget()})
			}
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(ctx, paneAgentWait)
	defer cancel()
	panes := map[string]map[string][]int{} // by tmux socket, then session
	for _, o := range owners {
		byName, ok := panes[o.socket]
		if !ok {
			byName, _ = s.Runner(o.socket).AllPanePIDs(ctx)
			panes[o.socket] = byName
		}
		if slices.ContainsFunc(byName[o.target], func(pid int) bool { return slices.Contains(chain, pid) }) {
			return o.id, true
		}
	}
	return loop.AgentIdentity{}, false
}

// AgentFor finds the session whose current spawn token's credential is:
// a standing session that runs (or whose start is in flight) or a
// work-item session that is active (or starting). ok is false for any
// other token — one never issued, replaced by a later spawn, or of a
// session that stopped.
func (s *Hearer) AgentFor(_ context.Context, token string) (loop.AgentIdentity, bool) {
	if token == "" || s.DB == nil {
		return loop.AgentIdentity{}, false
	}
	want := credential.Hash(token)
	var id loop.AgentIdentity
	found := false
	_ = s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, r := range recs {
			starting := r.Claim != nil && r.Claim.Op == "start"
			if credential.HashEqual(r.AgentTokenHash, want) && (r.Status == loop.StatusRunning || starting) && !found {
				id, found = loop.AgentIdentity{Standing: r.Name, HarnessSessionID: r.HarnessSessionID}, true
			}
		}
		items, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		for _, r := range items {
			starting := r.Claim != nil && r.Claim.Op == "start"
			if credential.HashEqual(r.AgentTokenHash, want) && (r.Status == loop.SessionActive || starting) && !found {
				id, found = loop.AgentIdentity{WorkItem: r.WorkItem.Ref, HarnessSessionID: r.HarnessSessionID}, true
			}
		}
		return nil
	})
	return id, found
}
