package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// EnvConfig names the environment variable that points at the CLI config
// when no --config flag is given.
const EnvConfig = "THE_LOOP_CLI_CONFIG"

// FileName is the config file's name in ./.the-loop and ~/.the-loop.
const FileName = "cli-config.yaml"

// FindFlag peeks the global config flag anywhere on a command line (the
// arguments after the program name): `--config PATH`, `--config=PATH` or
// `-c PATH`. It returns the path (the last one given; "" when none) and the
// other arguments in order. Scanning stops at "--"; a flag with no value
// left after it stays in rest, for the command-line parser to report.
func FindFlag(args []string) (path string, rest []string) {
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return path, append(rest, args[i:]...)
		case a == "--config" || a == "-c":
			if i+1 < len(args) {
				path = args[i+1]
				i++
				continue
			}
			rest = append(rest, a)
		case strings.HasPrefix(a, "--config="):
			path = strings.TrimPrefix(a, "--config=")
		default:
			rest = append(rest, a)
		}
	}
	return path, rest
}

// Resolve says which config file to load, first hit wins: the flag's path,
// then $THE_LOOP_CLI_CONFIG, then the first .the-loop/cli-config.yaml in
// the working directory or a directory above it (Discover, as git finds
// .git), then ~/.the-loop/cli-config.yaml and
// $XDG_CONFIG_HOME/the-loop/cli-config.yaml (~/.config when the variable is
// unset or not absolute, as the XDG base directory rules say) when they are
// files. The result is absolute (a leading ~ expanded); "" means no file:
// the defaults apply. A path named by the flag or the variable is returned
// even when it does not exist (Locate refuses it; Load would give the
// defaults). Resolve checks no ownership: Locate does.
func Resolve(flag string) string {
	if flag != "" {
		return absPath(flag)
	}
	if env := os.Getenv(EnvConfig); env != "" {
		return absPath(env)
	}
	if cwd, err := os.Getwd(); err == nil {
		if p := Discover(cwd); p != "" {
			return p
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		global := filepath.Join(home, ".the-loop", FileName)
		if isFile(global) {
			return absPath(global)
		}
	}
	if xdg := xdgConfigHome(); xdg != "" {
		if p := filepath.Join(xdg, "the-loop", FileName); isFile(p) {
			return p
		}
	}
	return ""
}

// Discover walks up from dir to the first directory holding
// .the-loop/cli-config.yaml and returns that file's path ("" when none), as
// git finds .git. It walks only through directories this user or root owns
// and no other user may write (fileperm.Walkable), and stops at the first
// that is not: a config planted there, or above it, is never found. The
// file found is returned whatever its mode (any entry that is not a
// directory): Locate refuses it when unsafe, and never looks further.
func Discover(dir string) string {
	dir = filepath.Clean(dir)
	for {
		if fileperm.Walkable(dir) != nil {
			return ""
		}
		p := filepath.Join(dir, ".the-loop", FileName)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// xdgConfigHome is $XDG_CONFIG_HOME when it is absolute, else ~/.config
// ("" when neither is known).
func xdgConfigHome() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return x
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// isFile reports whether p names a regular file (following symlinks).
func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Locate is Resolve, refusing (EINVALID) a path the operator named
// explicitly — with the flag or $THE_LOOP_CLI_CONFIG — that does not exist
// (a mistyped path must not quietly mean the defaults: another state root,
// no sessions), and any config file that is not safe to load
// (fileperm.Check: another user owns it, others may write
// it or a directory above it). An unsafe file is refused, never skipped for
// the next candidate; the path is returned with that refusal (stop still
// uses it, from a safe store).
func Locate(flag string) (string, error) {
	path := Resolve(flag)
	from := ""
	switch {
	case flag != "":
		from = "given with -c/--config"
	case os.Getenv(EnvConfig) != "":
		from = "named by $" + EnvConfig
	}
	if path == "" {
		return "", nil
	}
	if _, err := os.Stat(path); from != "" && errors.Is(err, fs.ErrNotExist) {
		return "", loop.Invalid("the CLI config %s (%s) does not exist; check the path, or leave it out to use the first .the-loop/%s in this directory or one above it, ~/.the-loop/%s, $XDG_CONFIG_HOME/the-loop/%s — or run `the-loop init` to write one",
			path, from, FileName, FileName, FileName)
	}
	if err := fileperm.Check(path, "CLI config"); err != nil {
		return path, err
	}
	return path, nil
}
