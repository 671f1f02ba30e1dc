package harness

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	loop "github.com/the-loop-dev/the-loop"
)

// eachLineBackward calls line with each line of the file at path, last
// first, until line returns false or the file's start is reached. The file
// is read from its end in chunks (transcriptChunk), so the cost follows how
// far back line reads, not the file's size; a last line that is still being
// written is passed as it is (line decodes and skips it). A missing file
// calls line never and is no error; what names the file in an error is
// what (e.g. "the Codex session file").
func eachLineBackward(path, what string, line func([]byte) bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return loop.Internal("reading %s %s: %w; check its permissions", what, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return loop.Internal("reading %s %s: %w", what, path, err)
	}
	end := fi.Size()
	var carry []byte // the start of a line whose beginning is in an earlier chunk
	buf := make([]byte, transcriptChunk)
	for end > 0 {
		size := int64(len(buf))
		if size > end {
			size = end
		}
		off := end - size
		if _, err := f.ReadAt(buf[:size], off); err != nil && !errors.Is(err, io.EOF) {
			return loop.Internal("reading %s %s: %w", what, path, err)
		}
		end = off
		data := append(buf[:size:size], carry...)
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			if l := bytes.TrimSpace(data[i+1:]); len(l) > 0 && !line(l) {
				return nil
			}
			data = data[:i]
		}
		carry = append([]byte(nil), data...)
	}
	if l := bytes.TrimSpace(carry); len(l) > 0 {
		line(l)
	}
	return nil
}
