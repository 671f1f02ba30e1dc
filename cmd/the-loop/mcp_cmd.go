//go:build !loop_omit_service

package main

import (
	"context"
	"io"
	"net"
	nethttp "net/http"
	"net/url"
	"path/filepath"

	loop "github.com/the-loop-dev/the-loop"
	loophttp "github.com/the-loop-dev/the-loop/http"
	"github.com/the-loop-dev/the-loop/sdk"
)

// Run bridges stdin and stdout to the service until stdin ends. Without a
// service on the socket every tool call is answered with an error naming
// it.
func (c *MCPCmd) Run(a *App) error {
	root, err := filepath.Abs(c.StateRoot)
	if err != nil {
		return loop.Invalid("--state-root %q: %v", c.StateRoot, err)
	}
	endpoint := "http://the-loop.sock" + loophttp.MCPPath
	if c.Session != "" {
		endpoint += "?session=" + url.QueryEscape(c.Session)
	}
	ctx, stop := signalContext()
	defer stop()
	return loophttp.BridgeMCP(ctx, io.NopCloser(a.Stdin), nopWriteCloser{a.Stdout}, socketHTTP(sdk.LocalSocket(root)), endpoint)
}

// nopWriteCloser is a writer whose Close does nothing (stdout stays open).
type nopWriteCloser struct{ io.Writer }

// Close does nothing.
func (nopWriteCloser) Close() error { return nil }

// socketHTTP is an HTTP client of the unix socket at path (the MCP
// bridge's), one connection per request, refusing a socket that is not this user's (sdk.CheckSocket).
func socketHTTP(path string) *nethttp.Client {
	return &nethttp.Client{Transport: &nethttp.Transport{Proxy: nil, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if err := sdk.CheckSocket(path); err != nil {
				return nil, err
			}
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}}
}
