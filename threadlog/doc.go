// Package threadlog is the Slack thread log: the inbound pipeline's view of
// the store (loop.ThreadLog). It reads the bound threads with their
// cursors, records a reply at most once (the cursor advanced and its
// events appended in one transaction, before anything is delivered;
// decisions D25), keeps the replies of sessions that cannot take them yet
// and hands them out again in order, and takes the standing sessions'
// outboxes of posts (answers, attention notes) for the poll cycle to post.
//
// Events are stamped and written by the loop.EventWriter it is given (in
// the service and the CLI, lifecycle's Service: its clock, source, pid and
// redaction), so an event reads the same whichever room writes it.
//
// It imports the store and the root package only (and may import redact);
// lifecycle never imports it, and cmd/the-loop wires it into the poller.
package threadlog
