// Package channels is the inbound pipeline: replies read from a channel
// (Slack) are checked (bot drop, allow-list) and delivered into the session
// their thread is bound to. channels/slack is the only importer of slack-go.
package channels
