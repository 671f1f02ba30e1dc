// Package channels is the-loop's Slack channel: it announces a standing
// session in a thread (Announcer, for lifecycle) and runs the inbound
// pipeline over the bound threads (Poller): replies are read, checked (bot
// drop, allow-list), recorded at most once and delivered into the session
// their thread is bound to through the same say core the CLI uses
// (original §9, decisions D22, D25). A reply in a work item's
// thread is first mirrored onto its ticket through the operator's gh
// (WorkItems, implemented by channels/github, original §10.3).
// channels/slack is the only importer of slack-go.
package channels
