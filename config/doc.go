// Package config reads the-loop's CLI config (cli-config.yaml): where the file
// is found, its embedded JSON Schema, the typed settings with the original's
// defaults, and the parser of the standingSessions block.
//
// The file is found as git finds .git (Discover: walking up from the working
// directory, only through directories the operator or root owns and others
// cannot write) unless the flag or $THE_LOOP_CLI_CONFIG names it, and every
// load checks its ownership and its state root's (internal/fileperm): Locate
// refuses an unsafe file, never skipping it for the next candidate, and the
// Holder keeps the last good config when a changed one is refused.
//
// A load runs, in order: the YAML decode (the top level must be a mapping),
// the migration gate (keys removed in 0.5.0, a declared version below it),
// the JSON Schema, and the standingSessions parser. Every refusal names the
// key in dotted form (standingSessions.sessions[2].name), never as a JSON
// pointer. A problem outside standingSessions fails the load; a problem inside
// it only marks the block as broken (Config.StandingErr), so status can still
// report the service and render one misconfigured row (decisions D8); start
// refuses such a config before anything runs, as it refuses a failed load. LoadTolerant never fails: it is what stop uses, so a broken config never
// strands a running agent.
//
// Relative paths in the config (state.root, routing.spawnWorkdir, a session's
// cwd and promptFile) are kept as written and resolve against the working
// directory of the process that loads the file, as in the original.
package config
