package lifecycle

import (
	loop "github.com/the-loop-dev/the-loop"
)

// A recorded conversation id is checked by its harness's adapter
// (loop.Harness.CheckSessionID) wherever it is read for an argv or a path;
// a hook payload's is checked before it is compared or stored
// (checkHookID).

// resumeArgv is adapter's ResumeArgv for id once the adapter has checked
// id's shape: an id that is not the CLI's never reaches its argv.
func resumeArgv(adapter loop.Harness, id string, args []string, prompt string) ([]string, error) {
	if err := adapter.CheckSessionID(id); err != nil {
		return nil, loop.Errorf(loop.EINVALID, "not resuming the recorded conversation: %w; "+
			"such a record was not written by the CLI's hooks — look at the events (`the-loop events`) for who set it", err)
	}
	return adapter.ResumeArgv(id, args, prompt)
}

// recordedIDRefused is the refusal of reading standing session name's
// recorded conversation id err refused.
func recordedIDRefused(name string, err error) error {
	return loop.Errorf(loop.EINVALID, "standing session '%s' records a conversation id its harness refuses, so no transcript path is built from it: %w", name, err)
}
