package talk

import (
	"context"
	"io"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
)

// afterDeliverer is a runner that takes a delivery's own submit delay
// (runner.Tmux.DeliverToAfter).
type afterDeliverer interface {
	DeliverToAfter(ctx context.Context, target string, text io.Reader, submitDelay time.Duration) error
}

// deliverTo pastes text into target for adapter's agent: with the
// adapter's SubmitDelay between the paste and the submit key when it has
// one and the runner takes it, else as the runner delivers every text.
func deliverTo(ctx context.Context, runner loop.Runner, adapter loop.Harness, target, text string) error {
	if d := adapter.SubmitDelay(); d > 0 {
		if r, ok := runner.(afterDeliverer); ok {
			return r.DeliverToAfter(ctx, target, strings.NewReader(text), d)
		}
	}
	return runner.DeliverTo(ctx, target, strings.NewReader(text))
}

// itemDeliverer is a runner that takes a work-item delivery's own submit
// delay (runner.Tmux.DeliverAfter).
type itemDeliverer interface {
	DeliverAfter(ctx context.Context, sess loop.WorkItemTarget, text io.Reader, submitDelay time.Duration) error
}

// deliverItem is deliverTo for a work item's session (runner.Deliver's
// refusals kept).
func deliverItem(ctx context.Context, runner loop.Runner, adapter loop.Harness, sess loop.WorkItemTarget, text string) error {
	if d := adapter.SubmitDelay(); d > 0 {
		if r, ok := runner.(itemDeliverer); ok {
			return r.DeliverAfter(ctx, sess, strings.NewReader(text), d)
		}
	}
	return runner.Deliver(ctx, sess, strings.NewReader(text))
}
