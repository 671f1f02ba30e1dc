// Package loop holds the-loop's domain: the names and refs that address a
// session, the stored records, the rows every surface renders, the event
// envelope, and the one error vocabulary. It imports only the standard
// library; every other package of the repository implements or consumes
// what is declared here.
//
// References in comments resolve in docs/: "decisions Dn" is docs/decisions.md, "original §n" is docs/original.md.
//
// Rooms (one job each):
//
//	cmd/the-loop  kong CLI and the only place concrete types are wired
//	config        the YAML CLI config, its embedded JSON Schema, the standingSessions parser
//	store         the only importer of bbolt: buckets, migrations, records, the event log
//	lifecycle     the looplab/fsm machines and the verbs; owns the transaction
//	runner        the only package that runs tmux
//	harness       one file per agent CLI: argv, trust, readiness; never execs
//	channels      the inbound pipeline (Slack)
//	http          echo REST, OpenAPI, MCP, and the typed client the CLI and SDK use
package loop
