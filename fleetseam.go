package loop

import (
	"context"
	"time"
)

// FleetPrefix is where every key of the fleet's store lives (decisions D36).
const FleetPrefix = "/the-loop/v1/"

// Fleet is the fleet's shared store as one host sees it (decisions D36): the
// hosts alive on their leases, and who owns each session that one of several
// hosts may run. Each host's own store stays the authority for its sessions;
// the fleet only says whose a session is. The fleet room implements it over
// etcd; without a `fleet:` block there is none and nothing dials out.
type Fleet interface {
	// Self is this host's name (fleet.host).
	Self() string
	// Claim makes this host the owner of ref when no host owns it (one
	// transaction: the owner key is created only where none exists) and
	// returns the owner either way, with the fencing token of its claim.
	// EUNAVAILABLE when the store does not answer.
	Claim(ctx context.Context, ref string) (Owner, error)
	// Take moves ref to this host when its owner is still from — the
	// token unchanged since from was read — in one transaction: a
	// failover's claim, which gives ref a greater token. ENOTOWNER when ref
	// moved meanwhile; EUNAVAILABLE when the store does not answer.
	Take(ctx context.Context, ref string, from Owner) (Owner, error)
	// OwnerOf returns ref's owner, and false when no host owns it.
	// EUNAVAILABLE when the store does not answer.
	OwnerOf(ctx context.Context, ref string) (Owner, bool, error)
	// Fence proves, in one transaction, that ref is still this host's under
	// token, and that this host's lease outlives bound (the action's own
	// bound): the check a failover-eligible session's spawn, resume,
	// restart, say and delete make before their effect. ENOTOWNER when ref
	// is another host's or its token moved; EUNAVAILABLE when the lease
	// cannot be proved for bound or the store does not answer.
	Fence(ctx context.Context, ref string, token int64, bound time.Duration) error
	// Release gives up ref's ownership when it is this host's under token
	// (a session deleted); a no-op otherwise.
	Release(ctx context.Context, ref string, token int64) error
	// Hosts returns the hosts registered on a live lease, by name.
	Hosts(ctx context.Context) ([]FleetHost, error)
	// LeaseLeft is how long this host's lease is proved for, counted from
	// when its last answered keep-alive was sent, on this process's
	// monotonic clock; 0 when it cannot be proved.
	LeaseLeft() time.Duration
}

// Owner is a session's owner in the fleet: the host and the fencing token,
// the owner key's mod revision — every claim of the session, a failover's
// too, gives it a greater one.
type Owner struct {
	Host  string `json:"host"`
	Token int64  `json:"token"`
}

// FleetHost is one host's registration, held on its lease.
type FleetHost struct {
	Name       string    `json:"name"`
	Address    string    `json:"address"`    // fleet.advertise
	Version    string    `json:"version"`    // the-loop's version
	Instance   string    `json:"instance"`   // this run of the service
	ConfigHash string    `json:"configHash"` // the config file's hash (drift)
	Started    time.Time `json:"started"`
}
