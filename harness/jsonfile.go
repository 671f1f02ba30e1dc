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
//     value is not an object, is re-read for a short while (its writer may be
//     half-way through), then reported and left untouched — a file that could
//     not be parsed is never replaced;
//   - edit reports whether it changed anything; when it did not, nothing is
//     written (mtime and inode stay);
//   - the new content (indent 2, trailing newline) goes to a temp file in the
//     same directory; the file is re-read just before the temp file replaces
//     it by rename, and when it changed meanwhile (Claude Code writes it
//     without the lock) the edit starts over on the new content, so that
//     writer's update is not lost. A new file gets mode 0600,
//     an existing one keeps its mode.
//
// edit may therefore run more than once, each time on a fresh document.
// Numbers are decoded as json.Number so values the edit does not touch are
// written back digit for digit. Key order is not preserved.
func updateJSONObject(path string, edit func(doc map[string]any) (bool, error)) error {
	return editLocked(path, "another program, e.g. Claude Code,", func(real string) (rawFile, []byte, os.FileMode, error) {
		before, err := readJSONObject(real)
		if err != nil {
			return rawFile{}, nil, 0, err
		}
		changed, err := edit(before.doc)
		if err != nil {
			return rawFile{}, nil, 0, fmt.Errorf("%s: %w; left untouched", real, err)
		}
		if !changed {
			return before.rawFile, nil, 0, nil
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(before.doc); err != nil { // Encode ends with the trailing newline
			return rawFile{}, nil, 0, fmt.Errorf("encode %s: %w", real, err)
		}
		return before.rawFile, buf.Bytes(), before.mode, nil
	})
}

// editLocked is the one way the harness edits a CLI's config file: path's
// links resolved, its directory made (0700), its lock held (at most
// lockWait), then build reads the file and returns what it read and the
// new content (nil: nothing to change); the content replaces the file by
// rename unless the file changed since build read it, in which case build
// runs again on the new content, at most maxRereads times. writer names
// who else writes the file, for the message when it kept changing.
func editLocked(path, writer string, build func(real string) (before rawFile, content []byte, mode os.FileMode, err error)) error {
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
	for attempt := 1; ; attempt++ {
		before, content, mode, err := build(real)
		if err != nil || content == nil {
			return err
		}
		done, err := replaceFile(real, content, mode, func() (bool, error) {
			now, err := readRaw(real)
			if err != nil {
				return false, err
			}
			return now.exists == before.exists && bytes.Equal(now.data, before.data), nil
		})
		if err != nil || done {
			return err
		}
		if attempt == maxRereads {
			return fmt.Errorf("%s kept changing while it was being edited (%d tries; %s "+
				"is writing it); left as that program wrote it — try again", real, maxRereads, writer)
		}
	}
}

// maxRereads bounds the edits updateJSONObject starts over because the file
// changed under it; parseRetries and parseRetryWait bound how long a file
// that does not parse is re-read before it is reported.
const (
	maxRereads     = 8
	parseRetries   = 10
	parseRetryWait = 20 * time.Millisecond
)

// rawFile is a file's bytes as read, or its absence.
type rawFile struct {
	data   []byte
	exists bool
}

func readRaw(path string) (rawFile, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return rawFile{}, nil
	case err != nil:
		return rawFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	return rawFile{data: data, exists: true}, nil
}

// jsonObject is a file read and parsed: its bytes, its object ({} when the
// file is missing) and the mode a replacement gets.
type jsonObject struct {
	rawFile
	doc  map[string]any
	mode fs.FileMode
}

// readJSONObject reads and parses path; a file that does not parse is read
// again a few times (a writer may be mid-write), then reported.
func readJSONObject(path string) (jsonObject, error) {
	for try := 1; ; try++ {
		raw, err := readRaw(path)
		if err != nil {
			return jsonObject{}, err
		}
		if !raw.exists {
			return jsonObject{rawFile: raw, doc: map[string]any{}, mode: 0o600}, nil
		}
		doc, err := decodeObject(raw.data)
		if err != nil {
			if try < parseRetries {
				time.Sleep(parseRetryWait)
				continue
			}
			return jsonObject{}, fmt.Errorf("%s: %w; left untouched — fix or remove it", path, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return jsonObject{}, fmt.Errorf("stat %s: %w", path, err)
		}
		return jsonObject{rawFile: raw, doc: doc, mode: fi.Mode().Perm()}, nil
	}
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
// lock: a start never hangs behind a process that holds it;
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

// replaceFile writes data to a temp file beside path with mode and syncs
// it; then, when unchanged reports that path still holds what the edit
// read, renames it over path (done true). Otherwise the temp file is removed
// and path is left as it is (done false).
func replaceFile(path string, data []byte, mode fs.FileMode, unchanged func() (bool, error)) (done bool, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("create temp file for %s: %w", path, err)
	}
	defer func() {
		if err != nil || !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return false, fmt.Errorf("chmod temp file for %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return false, fmt.Errorf("write temp file for %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return false, fmt.Errorf("sync temp file for %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("close temp file for %s: %w", path, err)
	}
	ok, err := unchanged()
	if err != nil || !ok {
		return false, err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	return true, nil
}
