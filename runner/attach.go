package runner

import "os"

// AttachArgv is the argv (the tmux binary first, as given in Options) that
// attaches the calling terminal to target's tmux session on this runner's
// server: `tmux [-L socket] [-f config] attach-session [-r] -t =<target>`,
// read-only (-r: keys are not passed to the agent) unless write.
func (t *Tmux) AttachArgv(target string, write bool) ([]string, error) {
	if err := guard(target); err != nil {
		return nil, err
	}
	argv := []string{t.opt.Binary}
	if t.opt.Socket != "" {
		argv = append(argv, "-L", t.opt.Socket)
	}
	if t.opt.ConfigFile != "" {
		argv = append(argv, "-f", t.opt.ConfigFile)
	}
	argv = append(argv, "attach-session")
	if !write {
		argv = append(argv, "-r")
	}
	return append(argv, "-t", "="+target), nil
}

// AttachEnv is the environment an attaching tmux client runs with: this
// process's, without TMUX and TMUX_PANE, so that an operator inside a tmux
// session of their own can attach to the-loop's (nested; tmux otherwise
// refuses), and without DropEnv's secrets.
func (t *Tmux) AttachEnv() []string {
	return dropEnv(os.Environ(), append([]string{"TMUX", "TMUX_PANE"}, t.opt.DropEnv...))
}
