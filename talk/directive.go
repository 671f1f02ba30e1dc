package talk

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// directive is a standing session's boot prompt (original §5.12). It is not
// configurable: the operator's brief is appended after it, never substituted.
// It names only commands this CLI has (a test in cmd/the-loop parses them
// out and checks each against the command tree): the original's read verb
// `graph show` is not one, and the control keywords are words posted on a
// ticket, not commands.
const directive = `You are **%[1]s**, a the-loop *standing session*.

A standing session is not a work item's session. You were started by ` + "`the-loop start`" + ` (or an operator's ` + "`the-loop standing start`" + `); you own no ticket, no spec chain and no pull request, and you finish when an operator stops you, not when something is delivered.

What that means concretely:
- Do not answer a phase-selection gate, approve a phase, or post a control keyword (the ticket-comment keywords ` + "`start`, `stop`, `pause`, `resume`" + `) on any ticket — those are a named human's declarations; posting one would arm or steer somebody else's work item.
- Do not open pull requests or push branches unless the operator asks in this conversation.
- You may read freely (` + "`the-loop status`, `the-loop standing list`, `the-loop sessions list`, `the-loop events`" + `, the GitHub surfaces) and report.
- Every comment you do post carries the marker ` + "`<!-- the-loop:agent-comment -->`" + ` and a short visible attribution line, as a work-item session's would.

Where your operator speaks to you: %[2]s. There is no ticket, so a question asked into the void is never answered — say what you need on those surfaces and wait.`

// BootPrompt builds the prompt a standing session boots with: the directive,
// then — when the operator gave one — a blank line, `---`, a blank line and
// the brief (inline prompt, else the promptFile's contents). An unreadable
// promptFile is an error naming the path. socket is routing.tmux.socketName,
// so the attach command it names reaches the right tmux server.
func BootPrompt(def loop.StandingDefinition, slackOn bool, socket string) (string, error) {
	surfaces := []string{
		fmt.Sprintf("the control plane (`the-loop standing say %s --text …`, or `POST /api/v1/standing-sessions/say`)", def.Name),
		fmt.Sprintf("an attached terminal (`%s attach -t %s`)", loop.TmuxCommand(socket), loop.TmuxTargetFor(def.Name)),
	}
	if def.SlackEnabled && slackOn {
		surfaces = append(surfaces, "the Slack thread this session was announced in")
	}
	prompt := strings.TrimSpace(fmt.Sprintf(directive, def.Name, strings.Join(surfaces, "; ")))
	brief := def.Prompt
	if brief == "" && def.PromptFile != "" {
		path := config.ExpandHome(def.PromptFile)
		data, err := readRegular(path, maxPromptFile)
		if err != nil {
			return "", loop.Invalid("standing session '%s': cannot read promptFile '%s': %v — fix the path or the file's permissions", def.Name, def.PromptFile, pathError(err))
		}
		brief = string(data)
	}
	if brief = strings.TrimSpace(brief); brief != "" {
		prompt += "\n\n---\n\n" + brief
	}
	return prompt, nil
}

// pathError strips the path an *os.PathError repeats.
func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// maxPromptFile bounds a promptFile's size.
const maxPromptFile = 1 << 20

// readRegular reads path only when it is a regular file of at most limit
// bytes: a FIFO, a device or a directory is refused without blocking, so a
// start never hangs holding its session's claim.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s); a promptFile is read whole at start, so a pipe or device is refused", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("it is %d bytes, more than the %d a promptFile may hold", fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
