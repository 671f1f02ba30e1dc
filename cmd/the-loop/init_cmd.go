package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// InitCmd is `the-loop init [DIR]`: a commented starter config in
// DIR/.the-loop/cli-config.yaml and the .gitignore lines that keep the
// state beside it out of git.
type InitCmd struct {
	Dir string `arg:"" optional:"" default:"." help:"The project directory (default: this one)." type:"path"`
}

// starterConfig is what init writes: one standing session, the service on,
// Slack off. It validates (held by a test).
const starterConfig = `# the-loop's CLI config for this project (the-loop init wrote it).
# Check it with ` + "`the-loop config validate`" + `; every key and its default:
# ` + "`the-loop config schema`" + `. Relative paths resolve against the project
# directory, the one holding .the-loop/.
state:
  # The store, the operator's token and the service's socket live here
  # (0700). .gitignore keeps them out of git; this file stays committable.
  root: .the-loop

service:
  # The service keeps the sessions alive and answers REST, MCP and the
  # dashboard on 127.0.0.1 (` + "`the-loop start`" + ` starts it in the background).
  enabled: true

routing:
  defaultHarness: claude  # the agent CLI a session runs unless it names its own
  spawnWorkdir: .         # where a session runs unless it names its cwd

channels:
  slack:
    # Slack is off; docs/slack.md says how to set it up.
    enabled: false

standingSessions:
  enabled: true  # ` + "`the-loop start`" + ` starts the sessions marked autoStart
  sessions:
    - name: worker
      description: A long-lived agent session for this project.
      prompt: |
        You are a standing session of the-loop. Wait for the operator's
        messages (` + "`the-loop standing say worker --text …`" + `).
      autoStart: true
`

// initGitignore are the lines init makes sure DIR/.gitignore holds.
var initGitignore = []string{".the-loop/*", "!.the-loop/" + config.FileName}

// Run writes the files: directories 0700 and files 0644 whatever the
// umask. An existing config is left as it is (exit 0, saying so): init is
// idempotent and never overwrites. A config the ownership rules would
// refuse, or that discovery would not find from DIR (another user owns
// DIR, or others may write it), is written all the same, with a warning.
func (c *InitCmd) Run(a *App) error {
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return loop.Invalid("cannot init %s: it is not a directory; create it first (mkdir -p %s) or name another", dir, dir)
	}
	stateDir := filepath.Join(dir, ".the-loop")
	path := filepath.Join(stateDir, config.FileName)
	if _, err := os.Lstat(path); err == nil {
		fmt.Fprintf(a.Stdout, "%s: already there; left as it is (check it with `the-loop -c %s config validate`)\n", termSafe(path), termSafe(path))
		return nil
	}
	if err := mkdirPrivate(stateDir); err != nil {
		return err
	}
	if err := writeNew(path, []byte(starterConfig)); err != nil {
		return err
	}
	ignore := filepath.Join(dir, ".gitignore")
	if err := ensureLines(ignore, initGitignore); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "wrote %s (one standing session, worker; the service on; Slack off)\n", termSafe(path))
	fmt.Fprintf(a.Stdout, "%s keeps the state in %s out of git\n", termSafe(ignore), termSafe(stateDir))
	if err := fileperm.Check(path, "CLI config"); err != nil {
		fmt.Fprintf(a.Stderr, "warning: every verb will refuse it until this is fixed: %s\n", termLines(loop.ErrorMessage(err)))
	} else if err := fileperm.Walkable(dir); err != nil {
		fmt.Fprintf(a.Stderr, "warning: the-loop will not find it from %s (give -c %s instead): %s\n", termSafe(dir), termSafe(path), termLines(loop.ErrorMessage(err)))
	}
	fmt.Fprintln(a.Stdout, "next: the-loop config validate, then the-loop start")
	return nil
}

// mkdirPrivate makes dir 0700 (whatever the umask); an existing directory
// is made 0700 too, since it is the state root.
func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return loop.Errorf(loop.EINVALID, "cannot create %s: %w; check that the directory above it is writable", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return loop.Errorf(loop.EINVALID, "cannot make %s private (chmod 700): %w", dir, err)
	}
	return nil
}

// writeNew creates path 0644 with data, never replacing a file.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return loop.Errorf(loop.EINVALID, "cannot write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(path, 0o644)); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot write %s: %w", path, err)
	}
	return nil
}

// ensureLines appends to path (created 0644) each of lines it does not
// hold yet.
func ensureLines(path string, lines []string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return loop.Errorf(loop.EINVALID, "cannot read %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add strings.Builder
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		add.WriteString("\n")
	}
	missing := false
	for _, l := range lines {
		if !have[l] {
			add.WriteString(l + "\n")
			missing = true
		}
	}
	if !missing {
		return nil
	}
	if len(data) == 0 {
		return writeNew(path, []byte("# the-loop's state (the store, the token, the socket); its config stays committable\n"+add.String()))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return loop.Errorf(loop.EINVALID, "cannot append to %s: %w", path, err)
	}
	_, werr := f.WriteString(add.String())
	if err := errors.Join(werr, f.Close()); err != nil {
		return loop.Errorf(loop.EINTERNAL, "cannot append to %s: %w", path, err)
	}
	return nil
}
