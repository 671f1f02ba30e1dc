package config

// Reload re-reads the file now, whatever its stamp says (the service's
// SIGHUP), by the rules of Current: a file that no longer loads keeps the
// last good config. It reports whether the config in use changed, and why
// the file on disk is not in use (nil when it is).
func (h *Holder) Reload() (changed bool, problem error) {
	if h.path == "" {
		return false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.cur.Load()
	next := h.reload(cur, statFile(h.path))
	h.cur.Store(next)
	return next.cfg != cur.cfg, next.problem
}
