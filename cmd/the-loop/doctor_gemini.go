package main

import (
	"os"
	"strings"

	"github.com/the-loop-dev/the-loop/harness"
)

// doctorGeminiHooks lists the hook entries the-loop keeps in the Gemini
// CLI's user settings: one per event, serving every state root (the
// session comes from the spawn's environment), so they stay when a session
// is deleted. No line when there are none.
func doctorGeminiHooks() []check {
	path, events, err := harness.NewGemini(harness.GeminiOptions{Env: os.Getenv}).HookEntries()
	if err != nil {
		return []check{{Check: "gemini hooks", Status: checkWarning, Detail: err.Error(),
			Remedy: "fix the file: the-loop adds its Gemini CLI hooks there at each gemini spawn"}}
	}
	if len(events) == 0 {
		return nil
	}
	return []check{{Check: "gemini hooks", Status: checkOK,
		Detail: path + " holds the-loop's hook (`the-loop-hook --from-env --json`, or `the-loop hook --from-env --json`) for " + strings.Join(events, ", ") +
			"; they serve every state root and stay when a session is deleted (outside a the-loop spawn they do nothing): " +
			"remove them by hand once no state root runs a gemini session"}}
}
