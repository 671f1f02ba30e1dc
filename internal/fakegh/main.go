// Command fakegh stands in for GitHub's gh CLI in tests: gh is an external
// program, faked like the agent CLI. Each run appends its arguments (after
// the program name) as one JSON array on a line of $FAKE_GH_DIR/calls.jsonl,
// then exits with the code in $FAKE_GH_DIR/exit-code (0 when the file is
// absent), writing a one-line complaint to stderr when that code is not 0.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	dir := os.Getenv("FAKE_GH_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "fakegh: FAKE_GH_DIR is not set")
		os.Exit(2)
	}
	line, err := json.Marshal(os.Args[1:])
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(filepath.Join(dir, "calls.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			_, err = f.Write(append(line, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakegh:", err)
		os.Exit(2)
	}
	code := 0
	if data, err := os.ReadFile(filepath.Join(dir, "exit-code")); err == nil {
		code, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "HTTP 502: fakegh was told to fail (exit %d)\n", code)
	}
	os.Exit(code)
}
