package config

import (
	"fmt"
	"os"
)

// Preflight is what `start` would hit that the schema cannot see, found
// in a loaded config (Load or LoadTolerant): errors are a standing
// session's cwd or promptFile that does not exist; warnings are
// standingSessions declared without `enabled: true` (start starts none of
// them) and every key set that this the-loop ignores. Each names its
// dotted key path and the remedy.
func (c *Config) Preflight() (errs, warnings []string) {
	entries, _ := mapping(c.Raw["standingSessions"])["sessions"].([]any)
	for i, item := range entries {
		entry := mapping(item)
		name, _ := entry["name"].(string)
		def, ok := c.Standing.Get(name)
		if !ok {
			continue // refused by the parser, which said why
		}
		at := fmt.Sprintf("standingSessions.sessions[%d]", i)
		cwdKey := at + ".cwd"
		if _, set := entry["cwd"]; !set {
			cwdKey = "routing.spawnWorkdir (" + at + " has no cwd)"
		}
		if fi, err := os.Stat(ExpandHome(def.Cwd)); err != nil {
			errs = append(errs, fmt.Sprintf("%s: '%s' does not exist (%v); create the directory or fix the path — `the-loop start` cannot start '%s' there",
				cwdKey, def.Cwd, pathErr(err), name))
		} else if !fi.IsDir() {
			errs = append(errs, fmt.Sprintf("%s: '%s' is not a directory; name a directory for '%s' to run in", cwdKey, def.Cwd, name))
		}
		if def.PromptFile != "" {
			if fi, err := os.Stat(ExpandHome(def.PromptFile)); err != nil {
				errs = append(errs, fmt.Sprintf("%s.promptFile: '%s' does not exist (%v); create it or fix the path — `the-loop start` cannot give '%s' its brief",
					at, def.PromptFile, pathErr(err), name))
			} else if !fi.Mode().IsRegular() {
				errs = append(errs, fmt.Sprintf("%s.promptFile: '%s' is not a regular file; name a file holding '%s''s brief", at, def.PromptFile, name))
			}
		}
	}
	if c.Standing != nil && len(c.Standing.Sessions) > 0 && !c.Standing.Enabled {
		warnings = append(warnings, fmt.Sprintf("standingSessions.enabled: not true, so `the-loop start` starts none of the %d declared sessions (`the-loop standing start NAME` still starts one); set standingSessions.enabled: true",
			len(c.Standing.Sessions)))
	}
	for _, key := range c.IgnoredSet() {
		warnings = append(warnings, fmt.Sprintf("%s: accepted, ignored — this the-loop does not act on it (the original's key); remove it or leave it", key))
	}
	return errs, warnings
}

// pathErr is an *os.PathError's cause (the path is already named).
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
