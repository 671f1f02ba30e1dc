// Package sdk is the Go SDK of the-loop: the typed client of the REST API
// that `the-loop serve` (or `the-loop start`) runs, for programs that
// manage standing sessions — long-lived AI coding-agent sessions the-loop
// keeps alive in tmux — and work items' sessions. It imports only the
// standard library and the-loop's root package, whose services its
// namespaces implement over REST (the CLI uses the same client whenever
// the service answers). It also holds the hook route's wire format, which
// `the-loop hook` writes and the service's route reads (NewHookRequest,
// Client.PostHook, ReadHookDelivery).
//
//	client := sdk.Local("/home/me/project/.the-loop") // the state root's socket, on the service's machine
//	rows, err := client.Standing.List(ctx)                        // loop.StandingService
//	res, err := client.Standing.Control(ctx, loop.StandingControlRequest{Name: "supervisor", Verb: loop.VerbRestart})
//	said, err := client.Standing.Say(ctx, loop.StandingSayRequest{Name: "supervisor", Text: "status report, please", Actor: "ops"})
//	items, err := client.WorkItems.List(ctx, "active")            // loop.WorkItemService
//	evs, err := client.Events(ctx, sdk.EventsQuery{Types: []string{"standing.*"}}) // loop.EventLog
//	sum, err := client.Channels.Poll(ctx)
//	report, err := client.Status(ctx)
//
// Two channels: Local (or Socket) talks over the service's unix socket,
// <state.root>/service.sock, and sends no token — the service reads the
// caller's uid and pid from the kernel, refuses another uid, and gives a
// process in an agent's pane an agent's rights only; New talks over TCP
// (a remote SDK, behind service.exposed), where every call but Health
// needs the operator's token: WithToken, the token file of WithStateRoot's
// state root (<state.root>/service.token, which the service creates at
// its first start), or $THE_LOOP_TOKEN. The SDK never reads the CLI
// config.
//
// The calls mirror the REST operations described by the service's OpenAPI
// document (GET /api/v1/openapi.yaml), take typed request structs and
// return the-loop's own types: rows, control, say, reply and close
// results, the status report, the poll summary and the event envelope.
//
// # Errors
//
// A refusal comes back as an *Error carrying the service's message, whose
// cause is the *loop.Error the HTTP status maps back to (404 ENOTFOUND, 400
// EINVALID, 422 EUNPROCESSABLE, 409 ECONFLICT, else EINTERNAL; loop.ErrorCode reads it) and
// then a *StatusError with the status itself (HTTPStatus); test it
// with errors.Is against ErrNotFound (404), ErrInvalid (a caller's mistake,
// 400, and a request that fails validation, 422), ErrUnprocessable (422
// only), ErrUnauthorized (401: a missing or wrong token, see WithToken),
// ErrForbidden (403: a Host the service does not answer to, an agent's
// credential over TCP, a socket peer of another uid, or a verb an agent
// may not run) and
// ErrInternal (anything else). ErrNotRunning says nothing answers
// at the address — start the service with `the-loop start`. A control
// result whose OK is false, and a say that could not deliver (Delivered
// false), are results, not errors.
package sdk
