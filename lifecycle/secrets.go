package lifecycle

import "github.com/the-loop-dev/the-loop/config"

// SecretValues are the values of the secrets kept out of agents
// (SecretEnv's variables, as getenv reads them): a post from an agent's
// answer never carries one.
func SecretValues(cfg *config.Config, getenv func(string) string) []string {
	var out []string
	for _, name := range SecretEnv(cfg) {
		if v := getenv(name); len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}
