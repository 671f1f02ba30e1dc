// Package talk is how the-loop speaks to an agent: the frames it types
// into a pane around a say's, a reply's or a peer's text, and the one path
// every message takes — wait until the agent is ready for input, paste,
// verify from its hooks that it took the text (one more submit key
// halfway), and await the turn's answer. A say into a standing session
// and a reply into a work item's session both go through Deliver; what
// differs between them (their records, their events, their sentences) is
// handed in as a Session.
//
// It knows nothing of records, the store or the machines: lifecycle's
// verbs read the record, check it, and record the delivery through the
// Session's callbacks. It may import the root package only.
package talk
