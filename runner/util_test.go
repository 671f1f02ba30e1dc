package runner_test

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/the-loop-dev/the-loop/runner"
)

// hanging is a tmux that never answers.
type hanging struct{}

func (hanging) Run(ctx context.Context, args []string, _ io.Reader) ([]byte, error) {
	<-ctx.Done()
	return nil, &runner.NoAnswerError{Args: args, Err: ctx.Err()}
}

// countingCommander runs real tmux and counts the calls.
type countingCommander struct {
	n atomic.Int64
}

func (c *countingCommander) Run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	c.n.Add(1)
	return runner.ExecCommander{}.Run(ctx, args, stdin)
}
