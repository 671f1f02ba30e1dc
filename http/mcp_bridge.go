package http

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeMCP is `the-loop mcp`'s work: an MCP stdio server
// on in and out whose every message is relayed, as it is, to the service's
// streamable-HTTP /mcp at endpoint through hc (a client that dials the
// service's socket), and every answer back. The bridge holds no tool list
// of its own: the agent sees the service's. A request the service refuses
// is answered with a JSON-RPC error naming why. It returns when in ends
// or ctx is done.
func BridgeMCP(ctx context.Context, in io.ReadCloser, out io.WriteCloser, hc *http.Client, endpoint string) error {
	local, err := (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := (&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}).Connect(ctx)
	if err != nil {
		return err
	}
	defer remote.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // the service's answers, back to the agent
		defer cancel()
		for {
			msg, err := remote.Read(ctx)
			if err != nil || local.Write(ctx, msg) != nil {
				return
			}
		}
	})
	for {
		msg, err := local.Read(ctx)
		if err != nil {
			cancel()
			_ = remote.Close()
			wg.Wait()
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := remote.Write(ctx, msg); err != nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				_ = local.Write(ctx, &jsonrpc.Response{ID: req.ID,
					Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the-loop service: " + err.Error()}})
			}
		}
	}
}
