package config

import (
	"slices"
	"strings"
)

// ignoredKeys are the keys of the original's schema this the-loop accepts
// and does not act on (decisions D8 keeps them valid), as dotted paths; a
// key beneath one is ignored with it. The schema describes each as
// "Accepted, ignored" (a test holds the two together), `config validate`
// warns about each one set, and `the-loop doctor` lists them.
var ignoredKeys = [...]string{
	"webhooks",
	"polling",
	"routing.enabled",
	"routing.registryDir",
	"routing.spawnOnUnmatched",
	"routing.autoExecuteLabel",
	"routing.control.enabled",
	"routing.control.requireStartCommand",
	"routing.interaction",
	"routing.graph",
	"routing.authorizedUsers",
	"routing.workspace",
	"routing.tmux.remainOnExit",
	"routing.tmux.sessionPerPr",
	"routing.webTerminal",
	"routing.maxConcurrentDispatches",
	"routing.dedupCacheSize",
	"routing.dispatchTimeoutSeconds",
	"routing.promptTemplate",
	"routing.spawnPromptTemplate",
	"routing.harnessTrust.scope",
	"routing.harnessPlugins",
	"routing.reactions",
	"routing.announce",
	"collaborators",
	"notifications",
	"channels.slack.events",
	"eventLog.enabled",
	"eventLog.path",
	"integrations.github.transport",
	"integrations.github.api",
	"integrations.jira",
	"service.autoStart",
	"service.hostIngresses",
	"service.cors",
	"selfDiagnosis",
}

// IgnoredKeys returns the keys of the original's schema this the-loop
// accepts and ignores, as dotted paths (a key beneath one is ignored too).
func IgnoredKeys() []string { return slices.Clone(ignoredKeys[:]) }

// IgnoredSet returns the ignored keys the config file sets (Raw), each as
// IgnoredKeys names it, sorted.
func (c *Config) IgnoredSet() []string {
	var out []string
	for _, key := range ignoredKeys {
		if isSet(c.Raw, strings.Split(key, ".")) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// isSet reports whether the mapping m has a non-null value at path (an
// empty section counts as not set, as the loader prunes it).
func isSet(m map[string]any, path []string) bool {
	v, ok := m[path[0]]
	if !ok || v == nil {
		return false
	}
	if len(path) == 1 {
		if sub, isMap := v.(map[string]any); isMap {
			return len(sub) > 0
		}
		return true
	}
	sub, isMap := v.(map[string]any)
	return isMap && isSet(sub, path[1:])
}
