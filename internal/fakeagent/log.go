//go:build linux

package main

import (
	"encoding/json"
	"os"
	"time"
)

// entry is one line of log.jsonl (internal/testkit's Entry reads it).
type entry struct {
	Kind      string            `json:"kind"`
	Time      string            `json:"time"`
	Pid       int               `json:"pid,omitempty"`
	Argv      []string          `json:"argv,omitempty"`
	SessionID string            `json:"sessionId,omitempty"`
	Resume    bool              `json:"resume,omitempty"`
	Prompt    string            `json:"prompt,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Children  []int             `json:"children,omitempty"`
	Text      string            `json:"text,omitempty"`
	Code      int               `json:"code,omitempty"`
	Ignored   bool              `json:"ignored,omitempty"`
	Error     string            `json:"error,omitempty"`
	Event     string            `json:"event,omitempty"`    // hook: the event name
	Command   string            `json:"command,omitempty"`  // hook: the command run ("" when none is declared)
	PromptID  string            `json:"promptId,omitempty"` // queued, dialog_answered, permission_dialog, permission_decided
	Payload   json.RawMessage   `json:"payload,omitempty"`  // hook: the payload sent on stdin
	Micros    int64             `json:"micros,omitempty"`   // hook: how long the command ran, waited for
	Tool      string            `json:"tool,omitempty"`     // permission_dialog, permission_decided: the tool's name
	Decision  string            `json:"decision,omitempty"` // permission_decided: allow, deny, reject or interrupt
}

// transcriptLine is one line of transcripts/<id>.jsonl.
type transcriptLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Text      string `json:"text"`
}

// logFile appends whole lines with one write each (O_APPEND), so lines of
// concurrent writers never interleave.
type logFile struct{ f *os.File }

// openLog opens (creating) the log for appending.
func openLog(path string) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &logFile{f: f}, nil
}

// write appends e as one JSON line, stamped with the time.
func (l *logFile) write(e entry) {
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	_, _ = l.f.Write(jsonLine(e))
}

// jsonLine marshals v followed by a newline.
func jsonLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"kind":"error"}`)
	}
	return append(b, '\n')
}
