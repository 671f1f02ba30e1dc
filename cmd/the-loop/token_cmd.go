package main

import (
	"fmt"
	"os"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/fileperm"
	"github.com/the-loop-dev/the-loop/internal/optoken"
)

// TokenCmd is `the-loop token [--rotate]`: print the operator's token
// (what a client sends as Authorization: Bearer), or replace it.
type TokenCmd struct {
	Rotate bool `help:"Replace the token file with a new token (restart the service to make it ask for the new one)."`
}

// Run prints the token, creating the token file (and the state root, 0700)
// when there is none yet; with --rotate it writes a new one. A token that
// service.tokenEnv names is the operator's to set: printed, never rotated.
func (c *TokenCmd) Run(a *App, cfg *config.Config) error {
	if cfg.Service.AuthOff() {
		return loop.Invalid("service.auth is none: the service asks for no token; set service.auth: token to use one")
	}
	var token string
	var err error
	switch {
	case cfg.Service.TokenEnv != "" && c.Rotate:
		return loop.Invalid("the operator's token is the value of $%s (service.tokenEnv): change that variable, then `the-loop restart`", cfg.Service.TokenEnv)
	case c.Rotate:
		token, err = optoken.RotateTokenFile(cfg.StateDir())
		if err == nil && servicePID(cfg) != 0 {
			fmt.Fprintln(a.Stderr, "note: the running service still asks for the old token; run `the-loop restart` to use the new one")
		}
	default:
		token, err = optoken.OperatorToken(cfg, os.Getenv, true)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.Stdout, token)
	return err
}

// serveToken is what the process that serves checks before it binds
// (CheckServe, then the files: a state root, token file or CLI config
// another user owns or others may write is refused, naming it) and the
// operator's token it asks for: the variable service.tokenEnv names, else
// <state.root>/service.token, created 0600 at the first start and kept
// across restarts ("" with service.auth: none).
func serveToken(cfg *config.Config) (string, error) {
	token, err := optoken.CheckServe(cfg.Service, os.Getenv)
	if err != nil {
		return "", err
	}
	if err := optoken.EnsureStateRoot(cfg.StateDir()); err != nil {
		return "", err
	}
	if cfg.Path != "" {
		if err := fileperm.Check(cfg.Path, "CLI config (the settings file)"); err != nil {
			return "", err
		}
	}
	if token != "" || cfg.Service.AuthOff() {
		return token, nil
	}
	return optoken.OperatorToken(cfg, os.Getenv, true)
}
