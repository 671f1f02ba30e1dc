package hearing

import (
	"context"
	"slices"
	"strings"
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
// AllPanePIDs); without a Runner nobody is an agent. A pane process seen
// before (byKnownPane), then a pane on a server seen before (byPane), is
// found first and its one record read: every hook of two hundred agents
// then reads one record, not two hundred; anything else is looked for
// among every record (byOwners).
func (s *Hearer) AgentOfProcess(ctx context.Context, chain []int) (loop.AgentIdentity, bool) {
	if s.Runner == nil || s.DB == nil || len(chain) == 0 {
		return loop.AgentIdentity{}, false
	}
	if id, ok := s.byKnownPane(chain); ok {
		return id, true
	}
	ctx, cancel := context.WithTimeout(ctx, paneAgentWait)
	defer cancel()
	panes := map[string]map[string][]int{} // by tmux socket, then session
	if id, ok := s.byPane(ctx, chain, panes); ok {
		return id, true
	}
	return s.byOwners(ctx, chain, panes)
}

// knownPane is a pane process seen in a tmux server's answer: the session
// whose pane it was, on which server, and its start time. While a process
// of that pid and start time lives it is that pane's — tmux never gives a
// live process to another pane; a respawn starts a new one — so a hook
// from below it needs no tmux query.
type knownPane struct {
	start          uint64
	socket, target string
}

// remember keeps the pane processes of socket's panes (byName, as
// AllPanePIDs gives them) for byKnownPane, in place of the ones it kept
// for that server before; without ProcStart nothing is kept.
func (s *Hearer) remember(socket string, byName map[string][]int) {
	if s.ProcStart == nil || byName == nil {
		return
	}
	seen := map[int]knownPane{}
	for target, pids := range byName {
		for _, pid := range pids {
			if start, ok := s.ProcStart(pid); ok {
				seen[pid] = knownPane{start: start, socket: socket, target: target}
			}
		}
	}
	s.panesMu.Lock()
	defer s.panesMu.Unlock()
	for pid, p := range s.panes {
		if p.socket == socket {
			delete(s.panes, pid)
		}
	}
	if s.panes == nil {
		s.panes = map[int]knownPane{}
	}
	for pid, p := range seen {
		s.panes[pid] = p
	}
}

// byKnownPane finds chain's agent without tmux: a pid of chain that is a
// pane process seen before (remember), still the same process, of a
// standing session whose record says it runs there (or is being started).
func (s *Hearer) byKnownPane(chain []int) (loop.AgentIdentity, bool) {
	if s.ProcStart == nil {
		return loop.AgentIdentity{}, false
	}
	for _, pid := range chain {
		s.panesMu.Lock()
		p, known := s.panes[pid]
		s.panesMu.Unlock()
		if !known {
			continue
		}
		if start, alive := s.ProcStart(pid); !alive || start != p.start {
			return loop.AgentIdentity{}, false
		}
		return s.runningIn(p.socket, p.target)
	}
	return loop.AgentIdentity{}, false
}

// runningIn is the standing session whose pane target is on socket, when
// its record says it runs there or is being started.
func (s *Hearer) runningIn(socket, target string) (loop.AgentIdentity, bool) {
	name, standing := strings.CutPrefix(target, loop.StandingTargetPrefix)
	if !standing {
		return loop.AgentIdentity{}, false
	}
	var id loop.AgentIdentity
	_ = s.DB.View(func(tx *store.Tx) error {
		r, err := tx.Standing(name)
		if err == nil && r != nil && r.TmuxSocket == socket && (r.Status == loop.StatusRunning || r.Claim != nil && r.Claim.Op == "start") {
			id = loop.AgentIdentity{Standing: r.Name, HarnessSessionID: r.HarnessSessionID}
		}
		return err
	})
	return id, id.Standing != ""
}

// inChain reports whether one of pids is in chain.
func inChain(pids, chain []int) bool {
	return slices.ContainsFunc(pids, func(pid int) bool { return slices.Contains(chain, pid) })
}

// byPane looks for chain in the panes of the tmux servers panes were seen
// on (remember), keeping their answers in panes: a pane of a standing
// session whose record says it runs there (or is being started) is that
// session's agent.
func (s *Hearer) byPane(ctx context.Context, chain []int, panes map[string]map[string][]int) (loop.AgentIdentity, bool) {
	s.panesMu.Lock()
	var sockets []string
	for _, p := range s.panes {
		if !slices.Contains(sockets, p.socket) {
			sockets = append(sockets, p.socket)
		}
	}
	s.panesMu.Unlock()
	for _, socket := range sockets {
		byName, _ := s.Runner(socket).AllPanePIDs(ctx)
		panes[socket] = byName
		s.remember(socket, byName)
		for target, pids := range byName {
			if strings.HasPrefix(target, loop.StandingTargetPrefix) && inChain(pids, chain) {
				return s.runningIn(socket, target)
			}
		}
	}
	return loop.AgentIdentity{}, false
}

// byOwners looks for chain in the panes of every session whose agent may
// run, in record order, asking each tmux server not in panes yet (and
// remembering its panes).
func (s *Hearer) byOwners(ctx context.Context, chain []int, panes map[string]map[string][]int) (loop.AgentIdentity, bool) {
	for _, o := range s.owners() {
		byName, ok := panes[o.socket]
		if !ok {
			byName, _ = s.Runner(o.socket).AllPanePIDs(ctx)
			panes[o.socket] = byName
			s.remember(o.socket, byName)
		}
		if inChain(byName[o.target], chain) {
			return o.id, true
		}
	}
	return loop.AgentIdentity{}, false
}

// owners are the sessions whose agent may be running: the standing ones
// that run or are being started, the work-item ones active or starting.
func (s *Hearer) owners() []paneOwner {
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
	return owners
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
