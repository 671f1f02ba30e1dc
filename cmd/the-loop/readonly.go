package main

import (
	"errors"
	"path/filepath"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/store"
)

// openForStop opens the store for a stop: as every verb does, or — when a
// newer the-loop wrote it, which every other verb refuses — read-only, so
// the stop still ends what it can decode and writes nothing.
// newer is then that refusal, for the stop to report (exit 1).
func (a *App) openForStop(cfg *config.Config) (db *store.DB, newer error, err error) {
	db, err = a.OpenStore(cfg, true)
	if !errors.Is(err, store.ErrNewerStore) {
		return db, nil, err
	}
	ro, rerr := store.OpenReadOnly(filepath.Join(cfg.StateDir(), "the-loop.db"), store.Options{})
	if rerr != nil || ro.Newer() == nil {
		return nil, nil, err
	}
	return ro, stoppedReadOnly(ro.Newer()), nil
}

// stoppedReadOnly is what a stop of a newer store says at its end.
func stoppedReadOnly(newer error) error {
	return loop.Internal("%s — stop opened it read-only, stopped the sessions it could decode and recorded nothing", loop.ErrorMessage(newer))
}
