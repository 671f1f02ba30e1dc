package talk

import (
	"fmt"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// Why a conversation is resumed, as a resume notice says it.
const (
	WhyStart   = "an operator started this session again (`the-loop start` or `the-loop standing start`)"
	WhyRestart = "an operator restarted this session (`the-loop standing restart` or `the-loop restart`)"
)

// WhyCrash is why the supervisor resumes a conversation whose agent ended
// as exit says.
func WhyCrash(exit *loop.ExitInfo, attempt int) string {
	how := "ended"
	switch {
	case exit == nil:
	case exit.Signal != "":
		how = "was killed by " + exit.Signal
	case exit.Code != nil && *exit.Code != 0:
		how = fmt.Sprintf("crashed with exit status %d", *exit.Code)
	case exit.Code != nil:
		how = "exited with status 0"
	}
	return fmt.Sprintf("the previous agent process %s, and the-loop's supervisor restarted it (restart %d)", how, attempt)
}

// ResumeNotice is what a resumed conversation is sent under
// standingSessions.resumePrompt: notice — the directive's first line, then
// one paragraph saying the-loop resumed the conversation and why, pointing
// at the brief already in it, so the agent does not redo its boot work.
func ResumeNotice(name, why string) string {
	first, _, _ := strings.Cut(fmt.Sprintf(directive, name, ""), "\n")
	if why == "" {
		why = WhyStart
	}
	return strings.TrimSpace(first) + "\n\n" +
		"the-loop resumed this conversation: " + why + ". " +
		"Your directive and your brief are earlier in this conversation and still apply; " +
		"do not redo the work you did when you first started — check where you were and carry on from there."
}
