// Package github is the channels pipeline's work-item side: a reply in a
// work item's Slack thread is first posted on its ticket as a comment — the
// answer of record — through the operator's own gh (Mirror, original
// §10.3), then delivered into the work item's session. It runs gh as a
// process and imports no GitHub library; the comment's body is scrubbed of
// secrets (Scrub) and its control keywords defanged (Defang).
package github
