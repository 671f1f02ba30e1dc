package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxLinkHops bounds symlink resolution (Linux's own limit is 40).
const maxLinkHops = 40

// updateJSONObject edits the JSON object stored at path under the write
// discipline of original §3.3:
//
//   - a symlink at path is followed, so the write lands in the real file and
//     the link stays a link;
//   - the read-modify-write runs under an exclusive flock on "<real>.lock",
//     so concurrent writers (other the-loop processes) do not lose updates;
//   - a missing file starts as {}; a file that is not valid JSON, or whose
//     value is not an object, is reported and left untouched;
//   - edit reports whether it changed anything; when it did not, nothing is
//     written (mtime and inode stay);
//   - the new content (indent 2, trailing newline) goes to a temp file in the
//     same directory, then replaces the file by rename; a new file gets mode
//     0600, an existing one keeps its mode.
//
// Numbers are decoded as json.Number so values the edit does not touch are
// written back digit for digit. Key order is not preserved.
func updateJSONObject(path string, edit func(doc map[string]any) (bool, error)) error {
	real, err := resolveLinks(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(real)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	unlock, err := lockFile(real+".lock", lockWait)
	if err != nil {
		return err
	}
	defer unlock()

	mode := fs.FileMode(0o600)
	doc := map[string]any{}
	data, err := os.ReadFile(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", real, err)
	default:
		if doc, err = decodeObject(data); err != nil {
			return fmt.Errorf("%s: %w; left untouched — fix or remove it", real, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return fmt.Errorf("stat %s: %w", real, err)
		}
		mode = fi.Mode().Perm()
	}

	changed, err := edit(doc)
	if err != nil {
		return fmt.Errorf("%s: %w; left untouched", real, err)
	}
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil { // Encode ends with the trailing newline
		return fmt.Errorf("encode %s: %w", real, err)
	}
	return replaceFile(real, buf.Bytes(), mode)
}

// decodeObject parses data as exactly one JSON object.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON (%v)", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not valid JSON (data after the top-level value)")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// resolveLinks follows symlinks in path's last element until it names a
// regular file or nothing; a dangling link resolves to its (missing) target,
// which is then created.
func resolveLinks(path string) (string, error) {
	p := path
	for range maxLinkHops {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("stat %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", p, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// lockWait bounds how long a write of a Claude config file waits for its
// lock: a start never hangs behind a process that holds it (issue 16 #4);
// the write is then skipped with a warning, like any that fails.
const lockWait = 10 * time.Second

// lockFile takes an exclusive flock on path (created 0600 if missing),
// waiting at most wait for it, and returns its release. The lock file is left in place: removing it would
// race another writer that has it open.
func lockFile(path string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: another process has held it for %s; the file was left as it is", path, wait)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// replaceFile writes data to a temp file beside path with mode, syncs it and
// renames it over path.
func replaceFile(path string, data []byte, mode fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod temp file for %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write temp file for %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync temp file for %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close temp file for %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
