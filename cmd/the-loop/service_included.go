//go:build !loop_omit_service

package main

import (
	"encoding/json"
	"fmt"
	"io"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// serviceBuiltIn is true: this program runs the service's commands
// itself (the-loopd, and the-loop built without -tags loop_omit_service).
const serviceBuiltIn = true

// announcer posts a session's Slack announcement in this process.
func announcer() lifecycle.Announcer { return channels.Announcer{} }

// Run reads the announcement, posts it and prints its thread's ts.
func (c *InternalAnnounceCmd) Run(a *App, cfg *config.Config) error {
	body, err := io.ReadAll(io.LimitReader(a.Stdin, 1<<20))
	if err != nil {
		return err
	}
	var ann loop.Announcement
	if err := json.Unmarshal(body, &ann); err != nil {
		return loop.Invalid("internal-announce: the announcement on stdin is not JSON: %v", err)
	}
	ctx, stop := signalContext()
	defer stop()
	thread, err := channels.Announcer{}.Announce(ctx, cfg, ann)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.Stdout, thread)
	return err
}
