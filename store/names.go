package store

import (
	"errors"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	loop "github.com/the-loop-dev/the-loop"
)

// StandingNames lists the recorded standing sessions' names, sorted, for a
// caller that must stay cheap and leave no trace (shell completion): the
// file is opened read-only — never created, never migrated — and its
// shared lock is waited for at most timeout. A missing file gives no names
// and no error. A file whose lock is held longer (the service holds the
// store while it runs) gives an error for which IsLocked is true.
func StandingNames(path string, timeout time.Duration) ([]string, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: max(timeout, time.Nanosecond)})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, lockTimeout(path, timeout)
	}
	if err != nil {
		return nil, loop.Internal("store: cannot open %s read-only: %w", path, err)
	}
	defer func() { _ = bdb.Close() }()
	var names []string
	err = bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketStanding)
		if b == nil { // a file from before the standing bucket: nothing recorded
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			names = append(names, string(k)) // bbolt iterates keys in byte order
			return nil
		})
	})
	if err != nil {
		return nil, loop.Internal("store: reading %s: %w", path, err)
	}
	return names, nil
}

// IsLocked reports whether err says the store's file lock was held by
// another process past the wait.
func IsLocked(err error) bool { return errors.Is(err, bolterrors.ErrTimeout) }
