package fleet_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/fleet"
	"github.com/the-loop-dev/the-loop/internal/etcdtest"
)

// join joins host to the fleet on srv with a 1 s lease, and leaves it when
// the test ends.
func join(t *testing.T, srv *etcdtest.Server, host string, opts ...func(*fleet.Options)) *fleet.Fleet {
	t.Helper()
	f, err := tryJoin(srv, host, opts...)
	if err != nil {
		t.Fatalf("joining %s: %v", host, err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func tryJoin(srv *etcdtest.Server, host string, opts ...func(*fleet.Options)) (*fleet.Fleet, error) {
	opt := fleet.Options{
		Endpoints: srv.Endpoints(), Host: host, Advertise: "unix:///tmp/" + host + ".sock", Version: "test",
		ConfigHash: "h1", Lease: time.Second, RequestTimeout: time.Second,
	}
	for _, o := range opts {
		o(&opt)
	}
	return fleet.Join(context.Background(), opt)
}

// eventually polls cond until it holds, failing the test as its deadline
// nears.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline, ok := t.Deadline()
	for !cond() {
		if ok && time.Until(deadline) < 5*time.Second {
			t.Fatalf("still waiting as the test's deadline nears: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func code(err error) string { return loop.ErrorCode(err) }

func hostNames(t *testing.T, f *fleet.Fleet) []string {
	t.Helper()
	hosts, err := f.Hosts(context.Background())
	if err != nil {
		t.Fatalf("Hosts: %v", err)
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name+"/"+h.Instance)
	}
	return names
}

func TestJoin_RegistersTheHostAndRefusesASecondLiveOneOfItsName(t *testing.T) {
	srv := etcdtest.Start(t)
	a := join(t, srv, "alpha")
	hosts, err := a.Hosts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 1 || hosts[0].Name != "alpha" || hosts[0].Instance != a.Instance() ||
		hosts[0].Address != "unix:///tmp/alpha.sock" || hosts[0].ConfigHash != "h1" {
		t.Fatalf("registered hosts = %+v, want alpha's one registration", hosts)
	}

	_, err = tryJoin(srv, "alpha", func(o *fleet.Options) { o.Advertise = "unix:///tmp/other.sock" })
	if code(err) != loop.ECONFLICT || !strings.Contains(err.Error(), a.Instance()) || !strings.Contains(err.Error(), "unix:///tmp/alpha.sock") {
		t.Fatalf("a second alpha joined with %v; want ECONFLICT naming the holder's instance and address", err)
	}
	if got := hostNames(t, a); len(got) != 1 || got[0] != "alpha/"+a.Instance() {
		t.Fatalf("after the refused join the hosts are %v; want alpha's registration untouched", got)
	}

	// Leaving revokes the lease: the name is free at once, not a lease later.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := tryJoin(srv, "alpha")
	if err != nil {
		t.Fatalf("alpha after the first run left: %v", err)
	}
	defer b.Close()
	if b.Instance() == a.Instance() {
		t.Fatal("two runs share an instance id")
	}
}

func TestJoin_RefusesABadHostNameAndNoEndpoints(t *testing.T) {
	for _, tc := range []struct {
		opt  fleet.Options
		want string
	}{
		{fleet.Options{Endpoints: []string{"http://127.0.0.1:1"}, Host: "Bad Host"}, "fleet.host 'Bad Host'"},
		{fleet.Options{Host: "alpha"}, "fleet.etcd.endpoints"},
		{fleet.Options{Endpoints: []string{"http://127.0.0.1:1"}, Host: "alpha", Lease: 500 * time.Millisecond}, "fleet.leaseSeconds 0.5"},
	} {
		_, err := fleet.Join(context.Background(), tc.opt)
		if code(err) != loop.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Join(%+v) = %v; want EINVALID naming %q", tc.opt, err, tc.want)
		}
	}
}

func TestClaim_HostsClaimingOneSessionAtOnceGetOneOwner(t *testing.T) {
	srv := etcdtest.Start(t)
	hosts := []*fleet.Fleet{join(t, srv, "alpha"), join(t, srv, "beta"), join(t, srv, "gamma")}
	const each = 10
	owners := make(chan loop.Owner, len(hosts)*each)
	var wg sync.WaitGroup
	for _, h := range hosts {
		for range each {
			wg.Go(func() {
				o, err := h.Claim(context.Background(), "standing:builder")
				if err != nil {
					t.Errorf("%s: Claim: %v", h.Self(), err)
				}
				owners <- o
			})
		}
	}
	wg.Wait()
	close(owners)
	var first loop.Owner
	for o := range owners {
		if first == (loop.Owner{}) {
			first = o
		}
		if o != first {
			t.Fatalf("claims disagree: %+v and %+v", first, o)
		}
	}
	got, ok, err := hosts[0].OwnerOf(context.Background(), "standing:builder")
	if err != nil || !ok || got != first {
		t.Fatalf("OwnerOf = %+v, %v, %v; want the claims' owner %+v", got, ok, err, first)
	}
	if first.Token <= 0 {
		t.Fatalf("the fencing token is %d", first.Token)
	}
}

func TestFence_HoldsForTheOwnerUntilAnotherHostTakesTheSession(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := join(t, srv, "alpha"), join(t, srv, "beta")
	ctx := context.Background()
	own, err := a.Claim(ctx, "standing:builder")
	if err != nil || own.Host != "alpha" {
		t.Fatalf("Claim = %+v, %v", own, err)
	}
	if err := a.Fence(ctx, "standing:builder", own.Token, 100*time.Millisecond); err != nil {
		t.Fatalf("the owner's fence: %v", err)
	}
	if err := b.Fence(ctx, "standing:builder", own.Token, 100*time.Millisecond); code(err) != loop.ENOTOWNER {
		t.Fatalf("another host's fence under the owner's token = %v; want ENOTOWNER", err)
	}

	moved, err := b.Take(ctx, "standing:builder", own)
	if err != nil || moved.Host != "beta" || moved.Token <= own.Token {
		t.Fatalf("Take = %+v, %v; want beta under a greater token than %d", moved, err, own.Token)
	}
	err = a.Fence(ctx, "standing:builder", own.Token, 100*time.Millisecond)
	if code(err) != loop.ENOTOWNER || !strings.Contains(err.Error(), "host beta") {
		t.Fatalf("the old owner's fence = %v; want ENOTOWNER naming beta", err)
	}
	if err := b.Fence(ctx, "standing:builder", moved.Token, 100*time.Millisecond); err != nil {
		t.Fatalf("the new owner's fence: %v", err)
	}
	// A second failover from the same stale read moves nothing.
	if _, err := a.Take(ctx, "standing:builder", own); code(err) != loop.ENOTOWNER {
		t.Fatalf("a take from a stale owner = %v; want ENOTOWNER", err)
	}
	// A claim after the take returns the new owner, not a new claim.
	if o, err := a.Claim(ctx, "standing:builder"); err != nil || o != moved {
		t.Fatalf("Claim after the take = %+v, %v; want %+v", o, err, moved)
	}
}

func TestFence_RefusesAnActionWhoseBoundOutlivesTheProvedLease(t *testing.T) {
	srv := etcdtest.Start(t)
	a := join(t, srv, "alpha")
	own, err := a.Claim(context.Background(), "standing:builder")
	if err != nil {
		t.Fatal(err)
	}
	err = a.Fence(context.Background(), "standing:builder", own.Token, 5*time.Second)
	if code(err) != loop.EUNAVAILABLE || !strings.Contains(err.Error(), "5s") {
		t.Fatalf("a fence for 5 s on a 1 s lease = %v; want EUNAVAILABLE naming the bound", err)
	}
}

func TestRelease_DeletesOnlyTheOwnersOwnKey(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := join(t, srv, "alpha"), join(t, srv, "beta")
	ctx := context.Background()
	own, err := a.Claim(ctx, "standing:builder")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, "standing:builder", own.Token); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.OwnerOf(ctx, "standing:builder"); !ok {
		t.Fatal("another host's release deleted the owner key")
	}
	if err := a.Release(ctx, "standing:builder", own.Token+1); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.OwnerOf(ctx, "standing:builder"); !ok {
		t.Fatal("a release under a wrong token deleted the owner key")
	}
	if err := a.Release(ctx, "standing:builder", own.Token); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.OwnerOf(ctx, "standing:builder"); ok || err != nil {
		t.Fatalf("after the owner's release OwnerOf = %v, %v; want none", ok, err)
	}
	if o, err := b.Claim(ctx, "standing:builder"); err != nil || o.Host != "beta" {
		t.Fatalf("a claim after the release = %+v, %v; want beta's", o, err)
	}
}

func TestKeepAlive_RegistersAgainWhenTheLeaseIsLost(t *testing.T) {
	srv := etcdtest.Start(t)
	a := join(t, srv, "alpha")
	raw, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	leases, err := raw.Leases(ctx)
	if err != nil || len(leases.Leases) != 1 {
		t.Fatalf("leases = %+v, %v; want alpha's one", leases, err)
	}
	if _, err := raw.Revoke(ctx, leases.Leases[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := hostNames(t, a); len(got) != 0 {
		t.Fatalf("after the revoke the hosts are %v", got)
	}
	eventually(t, "alpha registered again on a new lease", func() bool {
		got := hostNames(t, a)
		return len(got) == 1 && got[0] == "alpha/"+a.Instance()
	})
	eventually(t, "alpha's lease proved again", func() bool { return a.LeaseLeft() > 0 })
}

func TestFleet_EtcdDownRefusesWhatNeedsItAndRecoversWhenBack(t *testing.T) {
	srv := etcdtest.Start(t)
	a := join(t, srv, "alpha")
	ctx := context.Background()
	own, err := a.Claim(ctx, "standing:builder")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := a.Claim(ctx, "standing:other"); code(err) != loop.EUNAVAILABLE {
		t.Fatalf("Claim with etcd down = %v; want EUNAVAILABLE", err)
	}
	if _, _, err := a.OwnerOf(ctx, "standing:builder"); code(err) != loop.EUNAVAILABLE {
		t.Fatalf("OwnerOf with etcd down = %v; want EUNAVAILABLE", err)
	}
	// No keep-alive is answered: the lease's proof runs out, and every
	// fence is refused on it without asking etcd.
	eventually(t, "alpha's lease proof to run out", func() bool { return a.LeaseLeft() == 0 })
	if err := a.Fence(ctx, "standing:builder", own.Token, 0); code(err) != loop.EUNAVAILABLE {
		t.Fatalf("Fence with etcd down = %v; want EUNAVAILABLE", err)
	}

	srv.Restart()
	eventually(t, "alpha registered over its own key and its fence good again", func() bool {
		got := hostNames(t, a)
		return len(got) == 1 && got[0] == "alpha/"+a.Instance() &&
			a.Fence(ctx, "standing:builder", own.Token, 100*time.Millisecond) == nil
	})
}

func TestLeaseLeft_AClockSetAheadMovesNoDeadline(t *testing.T) {
	srv := etcdtest.Start(t)
	ahead := func() time.Time { return time.Now().Add(10 * time.Minute) }
	a := join(t, srv, "alpha", func(o *fleet.Options) { o.Now = ahead })
	left := a.LeaseLeft()
	if left <= 0 || left > time.Second {
		t.Fatalf("LeaseLeft with the clock 10 minutes ahead = %v; want within the 1 s lease", left)
	}
	own, err := a.Claim(context.Background(), "standing:builder")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a fence on a host whose clock is ahead", func() bool {
		return a.Fence(context.Background(), "standing:builder", own.Token, 100*time.Millisecond) == nil
	})
}

func TestError_UnavailableNamesTheEndpoints(t *testing.T) {
	_, err := fleet.Join(context.Background(), fleet.Options{
		Endpoints: []string{"http://127.0.0.1:1"}, Host: "alpha", DialTimeout: 200 * time.Millisecond, RequestTimeout: 200 * time.Millisecond,
	})
	var e *loop.Error
	if !errors.As(err, &e) || e.Code != loop.EUNAVAILABLE || !strings.Contains(err.Error(), "http://127.0.0.1:1") {
		t.Fatalf("Join with no etcd = %v; want EUNAVAILABLE naming the endpoint", err)
	}

}
