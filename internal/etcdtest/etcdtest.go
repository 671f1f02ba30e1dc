// Package etcdtest runs a real etcd server inside a test process (etcd's
// own embed package, with fast ticks), for the fleet's tests: one member
// on loopback ports of its own and a data directory under the test's temp
// dir, stopped when the test ends, and restartable over the same data — etcd
// back after an outage. Imported by tests only.
package etcdtest

import (
	"net"
	"net/url"
	"testing"

	"go.etcd.io/etcd/server/v3/embed"
)

// Server is one embedded etcd member.
type Server struct {
	t                  testing.TB
	dir                string
	clientURL, peerURL url.URL
	e                  *embed.Etcd
}

// Start starts a member and waits until it serves; the test's cleanup
// stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir(), clientURL: freeURL(t), peerURL: freeURL(t)}
	s.start(false)
	t.Cleanup(s.Stop)
	return s
}

// Endpoints are the member's client URLs, for a fleet's etcd.endpoints.
func (s *Server) Endpoints() []string { return []string{s.clientURL.String()} }

// Stop stops the member, keeping its data (a no-op when it is stopped).
func (s *Server) Stop() {
	if s.e == nil {
		return
	}
	s.e.Close()
	<-s.e.Server.StopNotify()
	s.e = nil
}

// Restart starts the stopped member again over the same data and ports.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start(true)
}

func (s *Server) start(existing bool) {
	s.t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "fleet-test"
	cfg.Dir = s.dir
	cfg.TickMs = 10
	cfg.ElectionMs = 50
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	cfg.ListenClientUrls = []url.URL{s.clientURL}
	cfg.AdvertiseClientUrls = []url.URL{s.clientURL}
	cfg.ListenPeerUrls = []url.URL{s.peerURL}
	cfg.AdvertisePeerUrls = []url.URL{s.peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if existing {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		s.t.Fatalf("etcdtest: starting an embedded etcd in %s: %v", s.dir, err)
	}
	// Readiness is etcd's own notice; a member that errors first is a
	// failed start, not a wait.
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		s.t.Fatalf("etcdtest: the embedded etcd failed before it was ready: %v", err)
	}
	s.e = e
}

// freeURL is a loopback URL on a port free when asked (etcd binds it
// itself, and a restart needs the same one, so port 0 will not do).
func freeURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("etcdtest: no free loopback port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return url.URL{Scheme: "http", Host: addr}
}
