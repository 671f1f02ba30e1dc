// Package harness holds the agent-CLI adapters the-loop can host in tmux:
// one file per CLI (claude.go, codex.go, gemini.go, cursor.go), with
// readers of each CLI's own transcript or session files. An adapter builds the argv that
// follows the binary on the tmux command line, pre-seeds the CLI's own
// config so it starts without an interactive dialog (Prepare), and says
// whether a pane snapshot shows the agent ready for typed input (Ready).
//
// Adapters never exec anything: the runner package starts the process, the
// lifecycle package decides when. Registry builds the four adapters (claude,
// codex, gemini, and cursor, which refuses every spawn); docs/harnesses.md
// says what each CLI can and cannot do.
package harness
