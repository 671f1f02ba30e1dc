package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	loop "github.com/the-loop-dev/the-loop"
)

// lockPoll is how often a waiting delivery retries the target's lock.
const lockPoll = 10 * time.Millisecond

// defaultLockDir is $TMPDIR/the-loop-tmux-locks-<uid>.
func defaultLockDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("the-loop-tmux-locks-%d", uid()))
}

// LockPath returns the lock file that serialises deliveries to target on
// this runner's server: <LockDir>/<socket>-<target>.lock ("default" when
// no socket is set).
func (t *Tmux) LockPath(target string) string {
	sock := t.opt.Socket
	if sock == "" {
		sock = "default"
	}
	sock = strings.NewReplacer("/", "_", "\x00", "_").Replace(sock)
	return filepath.Join(t.opt.LockDir, sock+"-"+target+".lock")
}

// lockTarget takes the per-target delivery lock (flock, so it holds across
// processes and across runners of one process), waiting until ctx is done.
func (t *Tmux) lockTarget(ctx context.Context, target string) (unlock func(), err error) {
	if err := ensurePrivateDir(t.opt.LockDir); err != nil {
		return nil, fail(loop.EINTERNAL, err, "could not lock deliveries to tmux session %s: %v", target, err)
	}
	path := t.LockPath(target)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fail(loop.EINTERNAL, err, "could not lock deliveries to tmux session %s: %v", target, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, fail(loop.EINTERNAL, err, "could not lock %s: %v", path, err)
		}
		if err := sleepCtx(ctx, lockPoll); err != nil {
			_ = f.Close()
			return nil, fail(loop.EINTERNAL, err,
				"another delivery to tmux session %s is still running; gave up waiting: %v", target, err)
		}
	}
}

// ensurePrivateDir creates dir 0700, or checks that an existing one is a
// directory owned by the caller and writable by nobody else.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if int(st.Uid) != uid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s must be owned by uid %d and writable only by it", dir, uid())
	}
	return nil
}
