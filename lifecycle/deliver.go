package lifecycle

import (
	"context"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// submitDelayer is an adapter whose CLI needs a longer pause between a
// paste and its submit key (harness.Gemini).
type submitDelayer interface {
	SubmitDelay() time.Duration
}

// submitDelay is the pause adapter's agent needs between a paste and its
// submit key: its SubmitDelay when it has one, else 0 (the runner's own).
func submitDelay(adapter loop.Harness) time.Duration {
	if d, ok := adapter.(submitDelayer); ok {
		return d.SubmitDelay()
	}
	return 0
}

// deliverTo pastes text into target for adapter's agent, with the
// adapter's SubmitDelay between the paste and the submit key when it has
// one (the runner's own delay when that is longer).
func deliverTo(ctx context.Context, runner loop.Runner, adapter loop.Harness, target, text string) error {
	return runner.DeliverTo(ctx, target, text, submitDelay(adapter))
}

// deliverItem is deliverTo for a work item's session (runner.Deliver's
// refusals kept).
func deliverItem(ctx context.Context, runner loop.Runner, adapter loop.Harness, sess loop.WorkItemTarget, text string) error {
	return runner.Deliver(ctx, sess, text, submitDelay(adapter))
}
