// Package loop holds the-loop's domain: the names and refs that address a
// session, the stored records, the rows every surface renders, the event
// envelope, and the one error vocabulary. It imports only the standard
// library; every other package of the repository implements or consumes
// what is declared here (docs/architecture.md draws the rooms and the
// arrows allowed between them).
//
// One file per entity holds its names, record, row, requests, results and
// service interface: standing.go (a standing session, its restart policy
// and how it last went down), workitem.go (a work item's session),
// session.go (what both kinds share: the claim, the hearing, the say's
// outcome, an agent's identity), thread.go (the Slack thread log), and
// event.go (the event envelope and the log's reader and writer). The seams
// to the outside world are runner.go (tmux), harness.go (an agent CLI) and
// hook.go (the hook route); error.go is the error vocabulary. The services
// the surfaces (REST, MCP, the CLI, the Slack pipeline) use are implemented
// by lifecycle in-process, by the SDK (sdk.Client) over REST, and by mock/
// with function fields for tests; cmd/the-loop picks one once. Each
// method's doc names the error codes it returns beyond EINTERNAL, which any
// of them may return (a store, tmux or transport failure).
//
// References in comments resolve in docs/: "decisions Dn" is
// docs/decisions.md, "original §n" is docs/original.md.
package loop
