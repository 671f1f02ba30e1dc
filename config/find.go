package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
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
// then $THE_LOOP_CLI_CONFIG, then ./.the-loop/cli-config.yaml,
// ~/.the-loop/cli-config.yaml and $XDG_CONFIG_HOME/the-loop/cli-config.yaml
// (~/.config when the variable is unset or not absolute, as the XDG base
// directory rules say) when they are files. The result is absolute
// (a leading ~ expanded); "" means no file: the defaults apply. A path named
// by the flag or the variable is returned even when it does not exist
// (Locate refuses it; Load would give the defaults).
func Resolve(flag string) string {
	if flag != "" {
		return absPath(flag)
	}
	if env := os.Getenv(EnvConfig); env != "" {
		return absPath(env)
	}
	local := filepath.Join(".the-loop", FileName)
	if isFile(local) {
		return absPath(local)
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

// Locate is Resolve, refusing a path the operator named explicitly — with
// the flag or $THE_LOOP_CLI_CONFIG — that does not exist: a mistyped path
// must not quietly mean the defaults (another state root, no sessions). The
// refusal (EINVALID) names the path and where it came from. The implicit
// ./.the-loop and ~/.the-loop lookups still fall back to the defaults.
func Locate(flag string) (string, error) {
	path := Resolve(flag)
	from := ""
	switch {
	case flag != "":
		from = "given with -c/--config"
	case os.Getenv(EnvConfig) != "":
		from = "named by $" + EnvConfig
	default:
		return path, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", loop.Invalid("the CLI config %s (%s) does not exist; check the path, or leave it out to use ./.the-loop/%s, ~/.the-loop/%s, $XDG_CONFIG_HOME/the-loop/%s or the defaults",
			path, from, FileName, FileName, FileName)
	}
	return path, nil
}
