// Package harness holds the agent-CLI adapters the-loop can host in tmux:
// one file per CLI (claude.go, cursor.go). An adapter builds the argv that
// follows the binary on the tmux command line, pre-seeds the CLI's own
// config so it starts without an interactive dialog (Prepare), and says
// whether a pane snapshot shows the agent ready for typed input (Ready).
//
// Adapters never exec anything: the runner package starts the process, the
// lifecycle package decides when (and finds the binary on PATH). Registry
// builds exactly the two adapters the original had (claude, cursor).
package harness
