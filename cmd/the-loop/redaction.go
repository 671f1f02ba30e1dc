package main

import (
	"os"
	"sync"

	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/sdk"
)

// newRedactor is the redactor of the secrets a process holds under the
// config in force (current()): the values of every variable a *TokenEnv
// key names (credential.SecretValues) and the token file's value, read once
// per config (a reload is a new one). The agent credentials it learns
// from the lifecycle service that issues them (lifecycle.Service.Redactor)
// and from the records (RememberCredentials).
func newRedactor(current func() *config.Config) *redact.Redactor {
	var mu sync.Mutex
	var seen *config.Config
	var values []string
	return redact.New(func() []string {
		cfg := current()
		mu.Lock()
		defer mu.Unlock()
		if cfg != seen {
			seen, values = cfg, credential.SecretValues(cfg, os.Getenv)
			if tok, err := sdk.ReadTokenFile(cfg.StateDir()); err == nil {
				values = append(values, tok)
			}
		}
		return values
	})
}
