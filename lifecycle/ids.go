package lifecycle

import (
	loop "github.com/the-loop-dev/the-loop"
)

// A recorded conversation id is checked by its harness's adapter
// (loop.Harness.CheckSessionID) wherever it is read for an argv or a path;
// a hook payload's is checked before it is compared or stored
// (checkHookID).

// recordedIDRefused is the refusal of reading standing session name's
// recorded conversation id err refused.
func recordedIDRefused(name string, err error) error {
	return loop.Errorf(loop.EINVALID, "standing session '%s' records a conversation id its harness refuses, so no transcript path is built from it: %w", name, err)
}
