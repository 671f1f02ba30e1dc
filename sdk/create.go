package sdk

import loop "github.com/the-loop-dev/the-loop"

// CreateOptions defines a standing session at runtime. Its zero values are
// the service's defaults: the session auto-starts with `the-loop start` and
// is started now.
type CreateOptions struct {
	// Name is required: lowercase letters, digits and hyphens, not starting
	// with a hyphen, at most 40.
	Name string
	// Harness is the agent CLI ("" uses routing.defaultHarness, else claude).
	Harness string
	// Cwd is the directory it runs in ("" uses routing.spawnWorkdir).
	Cwd string
	// Prompt is the boot brief.
	Prompt      string
	Description string
	// HarnessArgs are extra harness arguments: nil inherits
	// routing.harnessArgs, a non-nil empty slice means none.
	HarnessArgs  []string
	SlackEnabled bool
	SlackChannel string
	// NoAutoStart leaves it out of `the-loop start`.
	NoAutoStart bool
	// NoStart records it without starting it.
	NoStart bool
}

// Request is the create request the options stand for (Standing.Create).
func (o CreateOptions) Request() loop.StandingCreateRequest {
	req := loop.StandingCreateRequest{
		Name:         o.Name,
		Harness:      o.Harness,
		Cwd:          o.Cwd,
		Prompt:       o.Prompt,
		Description:  o.Description,
		SlackEnabled: o.SlackEnabled,
		SlackChannel: o.SlackChannel,
		AutoStart:    !o.NoAutoStart,
		Start:        !o.NoStart,
	}
	if o.HarnessArgs != nil {
		args := append([]string{}, o.HarnessArgs...)
		req.HarnessArgs = &args
	}
	return req
}
