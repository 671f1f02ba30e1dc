package runner

import "context"

// PanePIDs returns the pids of the live panes of tmux session target (the
// processes a hook's parent chain must reach to speak for the session).
func (t *Tmux) PanePIDs(ctx context.Context, target string) ([]int, error) {
	return t.livePanePids(ctx, target)
}
