// Package fleet is the fleet's store on etcd (decisions D36): this host's
// registration on a lease it keeps alive, and the owner keys — not on a
// lease — whose mod revisions are the fencing tokens of the sessions several
// hosts may run. It is the only importer of go.etcd.io/etcd/, and only the
// service's program links it (decisions D37). Each host's bbolt file stays
// the authority for its own sessions: etcd only says whose a session is.
package fleet

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	loop "github.com/the-loop-dev/the-loop"
)

// Defaults of Options.
const (
	DefaultLease          = 10 * time.Second
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// HostRE is a fleet host's name: it becomes a key and a column.
var HostRE = loop.NewGrammar(`^[a-z0-9][a-z0-9.-]{0,62}$`)

// Options configures Join.
type Options struct {
	Endpoints []string    // fleet.etcd.endpoints
	TLS       *tls.Config // fleet.etcd.tls; nil: plain (a local etcd)
	Host      string      // fleet.host
	Advertise string      // fleet.advertise
	Version   string      // the-loop's version
	// ConfigHash is the config file's hash, registered so every host sees
	// drift.
	ConfigHash string
	// Lease is the host lease's time to live (fleet.leaseSeconds; at
	// least 1 s, default 10 s).
	Lease time.Duration
	// DialTimeout bounds connecting to etcd (default 5 s).
	DialTimeout time.Duration
	// RequestTimeout bounds each call to etcd (default 5 s).
	RequestTimeout time.Duration
	// Now is the service's clock (default time.Now). Deadlines are kept on
	// the monotonic reading of what it returns, so a wall clock set wrong
	// on one host moves none of them.
	Now func() time.Time
	// Logger receives the lease's losses and re-registrations (default:
	// discarded).
	Logger *slog.Logger
}

// Fleet is one host's member of the fleet: its lease kept alive, its
// registration renewed when the lease was lost, and the owner keys. It
// implements loop.Fleet and is safe for concurrent use.
type Fleet struct {
	opt      Options
	cli      *clientv3.Client
	log      *slog.Logger
	instance string
	started  time.Time

	mu          sync.Mutex
	lease       clientv3.LeaseID
	provedUntil time.Time // when the lease ends, counted from a keep-alive's send

	stop context.CancelFunc
	done chan struct{}
}

var _ loop.Fleet = (*Fleet)(nil)

// Join connects to the fleet's etcd and registers this host on a lease of
// its own, refusing when another live service holds the host's name. The
// lease is kept alive until Close, and re-registered when it was lost (a
// host paused past it, etcd restarted without it).
func Join(ctx context.Context, opt Options) (*Fleet, error) {
	if !HostRE.MatchString(opt.Host) {
		return nil, loop.Invalid("invalid fleet.host '%s': expected lowercase letters, digits, dots and hyphens (max 63; %s) — "+
			"it names this host in the fleet's keys", opt.Host, HostRE)
	}
	if len(opt.Endpoints) == 0 {
		return nil, loop.Invalid("fleet.etcd.endpoints is empty: name at least one etcd client URL (e.g. http://127.0.0.1:2379)")
	}
	if opt.Lease == 0 {
		opt.Lease = DefaultLease
	}
	if opt.Lease < time.Second {
		return nil, loop.Invalid("invalid fleet.leaseSeconds %v: at least 1 (etcd grants no shorter lease)", opt.Lease.Seconds())
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = DefaultDialTimeout
	}
	if opt.RequestTimeout <= 0 {
		opt.RequestTimeout = DefaultRequestTimeout
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opt.Endpoints,
		TLS:         opt.TLS,
		DialTimeout: opt.DialTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, unavailable(opt.Endpoints, "connecting", err)
	}
	f := &Fleet{opt: opt, cli: cli, log: log, instance: newInstance(), started: opt.Now(), done: make(chan struct{})}
	if err := f.register(ctx); err != nil {
		_ = cli.Close()
		return nil, err
	}
	kctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	go f.keepAlive(kctx)
	return f, nil
}

// Self returns this host's name.
func (f *Fleet) Self() string { return f.opt.Host }

// Instance returns this run's instance id (a host's registration names it).
func (f *Fleet) Instance() string { return f.instance }

// Close stops keeping the lease alive and revokes it, so the host's
// registration ends at once rather than when the lease runs out; the owner
// keys stay (ownership is not liveness).
func (f *Fleet) Close() error {
	f.stop()
	<-f.done
	f.mu.Lock()
	id := f.lease
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), f.opt.RequestTimeout)
	defer cancel()
	_, rerr := f.cli.Revoke(ctx, id)
	if err := f.cli.Close(); err != nil {
		return err
	}
	if rerr != nil && !errors.Is(rerr, rpctypes.ErrLeaseNotFound) {
		return unavailable(f.opt.Endpoints, "revoking this host's lease", rerr)
	}
	return nil
}

// hostKey and ownerKey are where a host's registration and a session's
// owner live.
func hostKey(host string) string { return loop.FleetPrefix + "hosts/" + host }
func ownerKey(ref string) string { return loop.FleetPrefix + "owners/" + ref }

// ownerValue is an owner key's value: the host alone, so a host's next run
// still owns what its last one claimed.
func ownerValue(host string) string {
	b, _ := json.Marshal(struct {
		Host string `json:"host"`
	}{host})
	return string(b)
}

// ownerHost reads an owner key's value.
func ownerHost(v []byte) string {
	var o struct {
		Host string `json:"host"`
	}
	if json.Unmarshal(v, &o) != nil {
		return ""
	}
	return o.Host
}

// register grants a lease and puts this host's registration on it, where
// none is (or where the one there is this run's own, lost with an old
// lease); another live run of the same host name is refused, naming it.
func (f *Fleet) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.opt.RequestTimeout)
	defer cancel()
	sent := f.opt.Now()
	g, err := f.cli.Grant(ctx, int64(f.opt.Lease/time.Second))
	if err != nil {
		return unavailable(f.opt.Endpoints, "granting this host's lease", err)
	}
	val, _ := json.Marshal(loop.FleetHost{
		Name: f.opt.Host, Address: f.opt.Advertise, Version: f.opt.Version,
		Instance: f.instance, ConfigHash: f.opt.ConfigHash, Started: f.started,
	})
	key := hostKey(f.opt.Host)
	resp, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(val), clientv3.WithLease(g.ID))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return unavailable(f.opt.Endpoints, "registering host "+f.opt.Host, err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		var held loop.FleetHost
		if len(kvs) > 0 {
			_ = json.Unmarshal(kvs[0].Value, &held)
		}
		if len(kvs) == 0 || held.Instance != f.instance {
			_, _ = f.cli.Revoke(ctx, g.ID)
			return loop.Conflict("fleet.host '%s' is held by another live the-loop service (instance %s at %s, version %s, since %s): "+
				"two services may not be one host — stop that one, or give this one another fleet.host",
				f.opt.Host, held.Instance, held.Address, held.Version, held.Started.Format(time.RFC3339))
		}
		// This run's own registration, on a lease that is going: move it
		// onto the new one, unless it changed meanwhile.
		r2, err := f.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", kvs[0].ModRevision)).
			Then(clientv3.OpPut(key, string(val), clientv3.WithLease(g.ID))).Commit()
		if err != nil {
			return unavailable(f.opt.Endpoints, "registering host "+f.opt.Host, err)
		}
		if !r2.Succeeded {
			_, _ = f.cli.Revoke(ctx, g.ID)
			return loop.Conflict("fleet.host '%s' changed while this service re-registered it: another run may hold it — "+
				"check `the-loop status --fleet`", f.opt.Host)
		}
	}
	f.mu.Lock()
	f.lease = g.ID
	f.provedUntil = sent.Add(time.Duration(g.TTL) * time.Second)
	f.mu.Unlock()
	return nil
}

// keepAlive renews the lease a third of its time to live apart, each
// renewal's proof counted from when it was sent; a lease found gone is
// registered anew.
func (f *Fleet) keepAlive(ctx context.Context) {
	defer close(f.done)
	every := f.opt.Lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.mu.Lock()
		id := f.lease
		f.mu.Unlock()
		sent := f.opt.Now()
		kctx, cancel := context.WithTimeout(ctx, every)
		r, err := f.cli.KeepAliveOnce(kctx, id)
		cancel()
		switch {
		case err == nil:
			f.mu.Lock()
			if f.lease == id {
				f.provedUntil = sent.Add(time.Duration(r.TTL) * time.Second)
			}
			f.mu.Unlock()
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			f.log.Warn("fleet: this host's lease expired; registering again", "host", f.opt.Host)
			if err := f.register(ctx); err != nil && ctx.Err() == nil {
				f.log.Warn("fleet: could not register again", "host", f.opt.Host, "error", err)
			}
		case ctx.Err() == nil:
			f.log.Debug("fleet: keep-alive got no answer", "host", f.opt.Host, "error", err)
		}
	}
}

// LeaseLeft returns how long the lease is proved for.
func (f *Fleet) LeaseLeft() time.Duration {
	f.mu.Lock()
	until := f.provedUntil
	f.mu.Unlock()
	return max(0, until.Sub(f.opt.Now()))
}

// call bounds one request to etcd.
func (f *Fleet) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.opt.RequestTimeout)
}

// Claim makes this host ref's owner where none is, and returns the owner.
func (f *Fleet) Claim(ctx context.Context, ref string) (loop.Owner, error) {
	ctx, cancel := f.call(ctx)
	defer cancel()
	key := ownerKey(ref)
	resp, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, ownerValue(f.opt.Host))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return loop.Owner{}, unavailable(f.opt.Endpoints, "claiming "+ref, err)
	}
	if resp.Succeeded {
		return loop.Owner{Host: f.opt.Host, Token: resp.Header.Revision}, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 { // released between the compare and the get: cannot be, one transaction
		return loop.Owner{}, loop.Internal("fleet: %s has an owner key with no value", ref)
	}
	return loop.Owner{Host: ownerHost(kvs[0].Value), Token: kvs[0].ModRevision}, nil
}

// Take moves ref to this host when its owner is still from (one
// transaction on from's token): a failover's claim. ENOTOWNER when ref
// moved meanwhile.
func (f *Fleet) Take(ctx context.Context, ref string, from loop.Owner) (loop.Owner, error) {
	ctx, cancel := f.call(ctx)
	defer cancel()
	key := ownerKey(ref)
	resp, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", from.Token)).
		Then(clientv3.OpPut(key, ownerValue(f.opt.Host))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return loop.Owner{}, unavailable(f.opt.Endpoints, "taking "+ref+" over", err)
	}
	if !resp.Succeeded {
		return loop.Owner{}, notOwner(ref, resp.Responses[0].GetResponseRange().Kvs, from.Token)
	}
	return loop.Owner{Host: f.opt.Host, Token: resp.Header.Revision}, nil
}

// OwnerOf returns ref's owner.
func (f *Fleet) OwnerOf(ctx context.Context, ref string) (loop.Owner, bool, error) {
	ctx, cancel := f.call(ctx)
	defer cancel()
	resp, err := f.cli.Get(ctx, ownerKey(ref))
	if err != nil {
		return loop.Owner{}, false, unavailable(f.opt.Endpoints, "reading "+ref+"'s owner", err)
	}
	if len(resp.Kvs) == 0 {
		return loop.Owner{}, false, nil
	}
	return loop.Owner{Host: ownerHost(resp.Kvs[0].Value), Token: resp.Kvs[0].ModRevision}, true, nil
}

// Fence proves ref is this host's under token and the lease outlives bound.
func (f *Fleet) Fence(ctx context.Context, ref string, token int64, bound time.Duration) error {
	if left := f.LeaseLeft(); left <= bound {
		return loop.Errorf(loop.EUNAVAILABLE, "host %s cannot prove its fleet lease for the %s %s's action needs (proved for %s): "+
			"refused rather than risk a second agent — check that etcd at %s answers",
			f.opt.Host, bound, ref, left.Round(time.Millisecond), strings.Join(f.opt.Endpoints, ","))
	}
	ctx, cancel := f.call(ctx)
	defer cancel()
	key := ownerKey(ref)
	resp, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", token),
			clientv3.Compare(clientv3.Value(key), "=", ownerValue(f.opt.Host))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return unavailable(f.opt.Endpoints, "checking "+ref+"'s owner", err)
	}
	if !resp.Succeeded {
		return notOwner(ref, resp.Responses[0].GetResponseRange().Kvs, token)
	}
	return nil
}

// Release deletes ref's owner key when it is this host's under token.
func (f *Fleet) Release(ctx context.Context, ref string, token int64) error {
	ctx, cancel := f.call(ctx)
	defer cancel()
	key := ownerKey(ref)
	_, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", token),
			clientv3.Compare(clientv3.Value(key), "=", ownerValue(f.opt.Host))).
		Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return unavailable(f.opt.Endpoints, "releasing "+ref, err)
	}
	return nil
}

// Hosts returns the live hosts' registrations.
func (f *Fleet) Hosts(ctx context.Context) ([]loop.FleetHost, error) {
	ctx, cancel := f.call(ctx)
	defer cancel()
	resp, err := f.cli.Get(ctx, loop.FleetPrefix+"hosts/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, unavailable(f.opt.Endpoints, "listing the fleet's hosts", err)
	}
	hosts := make([]loop.FleetHost, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var h loop.FleetHost
		if json.Unmarshal(kv.Value, &h) == nil {
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// notOwner is ENOTOWNER for ref, naming its owner now (kvs: the owner key
// read in the failed transaction).
func notOwner(ref string, kvs []*mvccpb.KeyValue, token int64) error {
	if len(kvs) == 0 {
		return loop.Errorf(loop.ENOTOWNER, "%s has no owner in the fleet any more (its token %d was released)", ref, token)
	}
	return loop.Errorf(loop.ENOTOWNER, "%s is owned by host %s under token %d, not by this host under token %d",
		ref, ownerHost(kvs[0].Value), kvs[0].ModRevision, token)
}

// unavailable is EUNAVAILABLE for a call to etcd that failed.
func unavailable(endpoints []string, doing string, err error) error {
	return loop.Errorf(loop.EUNAVAILABLE, "fleet: %s: etcd at %s did not answer: %w — check fleet.etcd.endpoints and that etcd runs",
		doing, strings.Join(endpoints, ","), err)
}

// newInstance is a fresh id for this run of the service.
func newInstance() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// String describes the member for logs.
func (f *Fleet) String() string {
	return fmt.Sprintf("fleet host %s (instance %s)", f.opt.Host, f.instance)
}
