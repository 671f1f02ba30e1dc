package config

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/the-loop-dev/the-loop/internal/fileperm"
)

// Holder holds the config a long-running process (the service) uses and
// re-reads the file when it changes (decisions D3). Current is cheap enough to
// call on every request: it stats the file, and only when size or mtime moved
// does it read it and compare its sha256 with the bytes in use; a new hash is
// loaded strictly. A file that no longer loads (or is gone) keeps the last
// good config, and the refusal is logged once per broken content. A file
// whose only problems are inside standingSessions does load: the block then
// renders as misconfigured, exactly as it would for the CLI (decisions D8).
//
// Holder is safe for concurrent use.
type Holder struct {
	// Logger receives the reload and refusal lines (default slog.Default()).
	// Set it before the first Current.
	Logger *slog.Logger

	path      string
	cur       atomic.Pointer[held]
	mu        sync.Mutex                       // serialises reloads
	onRefused func(path string, problem error) // under mu
}

// OnRefused sets what hears a reload the ownership rules refuse
// (fileperm.Check: the file or its state root now belongs
// to another user or is writable by others): the service records
// service.reload_refused. It is called once per refusal, under the lock
// that serialises reloads.
func (h *Holder) OnRefused(f func(path string, problem error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onRefused = f
}

// held is one observation of the file and the config in use.
type held struct {
	cfg     *Config
	stamp   fileStamp
	sum     [sha256.Size]byte // of the bytes cfg was loaded from (or last refused)
	problem error             // why the file on disk is not in use (nil when it is)
}

// fileStamp is what a stat says of the file; equal stamps mean unchanged.
type fileStamp struct {
	exists bool
	size   int64
	mtime  time.Time
	mode   fs.FileMode
	uid    uint32 // a chown alone changes no other field
	gid    uint32
}

func statFile(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.uid, st.gid = sys.Uid, sys.Gid
	}
	return st
}

// NewHolder loads the config at path strictly (Load) and holds it. An empty
// path or a missing file holds the defaults; a file that fails to load is
// the error, since there is no last good config to fall back on.
func NewHolder(path string) (*Holder, error) {
	h := &Holder{path: path}
	if path == "" {
		h.cur.Store(&held{cfg: Default()})
		return h, nil
	}
	if err := fileperm.Check(path, "CLI config"); err != nil {
		return nil, err
	}
	st := statFile(path)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		data = nil // Load names the read failure
	}
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := fileperm.Check(cfg.StateDir(), "state root (state.root)"); err != nil {
		return nil, err
	}
	h.cur.Store(&held{cfg: cfg, stamp: st, sum: sha256.Sum256(data)})
	return h, nil
}

// Path returns the file the holder watches ("" when none).
func (h *Holder) Path() string { return h.path }

// Current returns the config to use for this request: the file's, re-read
// when it changed, or the last good one while the file does not load.
func (h *Holder) Current() *Config {
	cur := h.cur.Load()
	if h.path == "" {
		return cur.cfg
	}
	st := statFile(h.path)
	if st == cur.stamp {
		return cur.cfg
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cur = h.cur.Load()
	if st == cur.stamp { // another request reloaded meanwhile
		return cur.cfg
	}
	next := h.reload(cur, st)
	h.cur.Store(next)
	return next.cfg
}

// Problem returns why the file on disk is not the config in use (its load
// refusal, or that it is gone), or nil when it is. It reflects the last
// Current.
func (h *Holder) Problem() error { return h.cur.Load().problem }

// reload reads the file stat'ed as st; cur is what is in use.
func (h *Holder) reload(cur *held, st fileStamp) *held {
	log := h.Logger
	if log == nil {
		log = slog.Default()
	}
	keep := func(sum [sha256.Size]byte, problem error) *held {
		if cur.problem == nil || sum != cur.sum || problem.Error() != cur.problem.Error() {
			log.Warn("the CLI config no longer loads; keeping the last good one",
				"path", h.path, "error", problem.Error())
		}
		return &held{cfg: cur.cfg, stamp: st, sum: sum, problem: problem}
	}
	if !st.exists {
		return keep([sha256.Size]byte{}, errors.New("the CLI config "+h.path+" is gone"))
	}
	refuse := func(problem error) *held {
		if h.onRefused != nil && (cur.problem == nil || problem.Error() != cur.problem.Error()) {
			h.onRefused(h.path, problem)
		}
		// No sum: once the file is safe again it is loaded afresh.
		return keep([sha256.Size]byte{}, problem)
	}
	if err := fileperm.Check(h.path, "CLI config"); err != nil {
		return refuse(err)
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		return keep([sha256.Size]byte{}, err)
	}
	sum := sha256.Sum256(data)
	if sum == cur.sum {
		// Touched, or restored to the bytes in use (or to the broken bytes
		// already reported).
		return &held{cfg: cur.cfg, stamp: st, sum: sum, problem: cur.problem}
	}
	cfg, err := Load(h.path)
	if err != nil {
		return keep(sum, err)
	}
	if err := fileperm.Check(cfg.StateDir(), "state root (state.root)"); err != nil {
		return refuse(err)
	}
	// Load reads a missing file as the defaults: a file removed between our
	// read and Load's must not replace the config with them. Changed under
	// us: keep what is in use and look again next time (a stamp no stat has).
	if again, err := os.ReadFile(h.path); err != nil || !bytes.Equal(again, data) {
		return &held{cfg: cur.cfg, stamp: fileStamp{size: -1}, sum: cur.sum, problem: cur.problem}
	}
	log.Info("the CLI config changed; reloaded it", "path", h.path)
	return &held{cfg: cfg, stamp: st, sum: sum}
}
