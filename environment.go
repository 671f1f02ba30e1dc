package loop

// Environment is the running service's view of its own environment (REST's
// GET /api/v1/environment): the PATH it was started with and what it finds
// there — tmux and each configured harness binary — as the checks `the-loop
// doctor` reports. The service spawns every agent in this environment, not
// in the environment of the CLI that asks.
type Environment struct {
	PID    int                `json:"pid"`
	Path   string             `json:"path"`
	Checks []EnvironmentCheck `json:"checks"`
}

// EnvironmentCheck is one thing the service found in its environment: its
// Check names it ("tmux", "harness claude"), Status is ok, warning, problem
// or n/a, Detail what was found and Remedy what to do about a problem.
type EnvironmentCheck struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy,omitempty"`
}
