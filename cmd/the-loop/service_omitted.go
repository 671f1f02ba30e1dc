//go:build loop_omit_service

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/lifecycle"
)

// serviceBuiltIn is false: this is the-loop, the CLI; the service's
// commands run in the-loopd (service_program.go).
const serviceBuiltIn = false

// announcer posts a session's Slack announcement through the-loopd.
func announcer() lifecycle.Announcer { return handedAnnouncer{} }

// handedAnnouncer posts announcements through the service's program
// (InternalAnnounceCmd): the CLI links no Slack client.
type handedAnnouncer struct{}

// Announce runs `the-loopd -c <config> internal-announce` with a on stdin.
func (handedAnnouncer) Announce(ctx context.Context, cfg *config.Config, a loop.Announcement) (string, error) {
	p, err := serviceProgram()
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	var args []string
	if cfg.Path != "" {
		args = append(args, "-c", cfg.Path)
	}
	cmd := exec.CommandContext(ctx, p, append(args, "internal-announce")...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(body), &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errOut.String()), "error:")); msg != "" {
			return "", loop.Errorf(loop.EINTERNAL, "%s", msg)
		}
		return "", loop.Errorf(loop.EINTERNAL, "%s internal-announce: %v", p, err)
	}
	return strings.TrimSpace(out.String()), nil
}
