//go:build linux

package main

// The Codex and Gemini CLI contracts of the fake (FAKE_AGENT_CONTRACT=codex
// or gemini; internal/testkit's `codex` and `gemini` wrappers set it), as
// docs/harnesses.md records them for Codex 0.171.0 and Gemini CLI 0.61.0
// and harness/testdata/{codex,gemini} holds them:
//
// codex: argv `[resume] [--no-daemon] [-c key=value]… [flags] -- <prompt>`
// or `resume … -- <id> [<prompt>]` (an unknown id exits 1, "ERROR: No saved
// session found with ID <id>"). The fake chooses its id itself. Hooks come
// from `-c hooks.<Event>=<TOML>` and $CODEX_HOME/hooks.json, and run only
// with `-c features.codex_hooks=true` and `--dangerously-bypass-hook-trust`
// (else the "Hooks need review" dialog stays on screen and the composer
// never shows). Events: SessionStart (source startup|resume), UserPromptSubmit
// (turn_id, prompt), Stop (turn_id, stop_hook_active,
// last_assistant_message), PostToolUse, PermissionRequest (tool_name); no
// SessionEnd. Every payload has session_id, transcript_path, cwd,
// hook_event_name, model, permission_mode. The session file
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<start>-<id>.jsonl is created
// with the first turn and held open while the fake runs — the only place
// its id shows before a hook (FAKE_AGENT_CODEX_HIDE_ID=1: never created).
// A message submitted during a turn joins it (UserPromptSubmit with the
// running turn's id; the turn's one Stop answers the last message).
// The composer is `› `.
//
// gemini: argv `--session-id <id>` or `--resume <id>`, the prompt in
// `--prompt-interactive=<prompt>` (or -i); a positional prompt is dropped.
// Hooks come from the settings files $GEMINI_CLI_SYSTEM_SETTINGS_PATH and
// <GEMINI_CLI_HOME or HOME>/.gemini/settings.json (timeouts in ms), each
// command's stdout must be JSON (a `hook_output` entry logs it). Events:
// SessionStart (source), BeforeAgent (prompt), AfterAgent (prompt,
// prompt_response, stop_hook_active), Notification (ToolPermission),
// SessionEnd (reason exit); every payload has session_id, transcript_path,
// cwd, hook_event_name, timestamp. The session file
// <gemini dir>/tmp/<slug>/chats/session-<YYYY-MM-DDThh-mm>-<id[:8]>.jsonl
// (the slug registered in projects.json, .project_root naming the cwd) is
// created at start. A carriage return within FAKE_AGENT_GEMINI_DROP_MS
// (default 40) of a paste's end is taken as a newline, as the CLI does
// after a paste from a terminal it does not trust. The input line is ` > `.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/uuid"
)

// Contracts.
const (
	contractClaude = ""
	contractCodex  = "codex"
	contractGemini = "gemini"
)

// promptGlyph is the input line's glyph of each contract.
func (a *agent) promptGlyph() string {
	switch a.contract {
	case contractCodex:
		return "› "
	case contractGemini:
		return " > "
	}
	return "❯ "
}

// printf prints to the terminal with the contract's input glyph.
func (a *agent) printf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if a.contract != contractClaude {
		s = strings.ReplaceAll(s, "❯ ", a.promptGlyph())
	}
	fmt.Print(s)
}

// parseCodexArgs reads Codex's argv.
func parseCodexArgs(argv []string) args {
	var a args
	rest := argv
	if len(rest) > 0 && rest[0] == "resume" {
		a.resume = true
		rest = rest[1:]
	}
	var positional []string
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		switch {
		case s == "--":
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case s == "-c" || s == "--config":
			if i+1 < len(rest) {
				a.overrides = append(a.overrides, rest[i+1])
				i++
			}
		case s == "--dangerously-bypass-hook-trust":
			a.bypassHookTrust = true
		case s == "--no-daemon":
			a.noDaemon = true
		case s == "-m" || s == "--model":
			if i+1 < len(rest) {
				a.model = rest[i+1]
				i++
			}
		case s == "-i" || s == "--image":
			for i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "-") {
				i++
			}
		case strings.HasPrefix(s, "-"):
		default:
			positional = append(positional, s)
		}
	}
	if a.resume && len(positional) > 0 {
		a.sessionID, positional = positional[0], positional[1:]
	}
	if len(positional) > 0 {
		a.prompt = positional[len(positional)-1]
	}
	return a
}

// parseGeminiArgs reads the Gemini CLI's argv; a positional prompt is
// dropped, as 0.61.0 does.
func parseGeminiArgs(argv []string) args {
	var a args
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		switch {
		case s == "--":
			a.dropped = append(a.dropped, argv[i+1:]...)
			i = len(argv)
		case s == "--session-id" || s == "--resume" || s == "-r":
			if i+1 < len(argv) {
				a.sessionID, a.resume = argv[i+1], s != "--session-id"
				i++
			}
		case strings.HasPrefix(s, "--session-id="):
			a.sessionID = strings.TrimPrefix(s, "--session-id=")
		case strings.HasPrefix(s, "--resume="):
			a.sessionID, a.resume = strings.TrimPrefix(s, "--resume="), true
		case strings.HasPrefix(s, "--prompt-interactive="):
			a.prompt = strings.TrimPrefix(s, "--prompt-interactive=")
		case s == "--prompt-interactive" || s == "-i":
			if i+1 < len(argv) {
				a.prompt = argv[i+1]
				i++
			}
		case s == "-m" || s == "--model":
			if i+1 < len(argv) {
				a.model = argv[i+1]
				i++
			}
		case strings.HasPrefix(s, "-"):
		default:
			a.dropped = append(a.dropped, s)
		}
	}
	return a
}

// codexHome is $CODEX_HOME, else $HOME/.codex.
func codexHome() string {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex")
}

// geminiDir is <GEMINI_CLI_HOME or HOME>/.gemini.
func geminiDir() string {
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".gemini")
}

// loadCodexHooks reads the hooks of the -c overrides and of
// $CODEX_HOME/hooks.json; untrusted is true when there are hooks but no
// --dangerously-bypass-hook-trust (Codex would ask to review them).
func loadCodexHooks(ar args) (set hookSet, enabled, untrusted bool, err error) {
	set = hookSet{}
	for _, o := range ar.overrides {
		key, value, ok := strings.Cut(o, "=")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if key == "features.codex_hooks" {
			enabled = strings.TrimSpace(value) == "true"
			continue
		}
		ev, ok := strings.CutPrefix(key, "hooks.")
		if !ok || strings.Contains(ev, ".") {
			continue
		}
		var doc struct {
			V []map[string]any `toml:"v"`
		}
		if _, derr := toml.Decode("v = "+value, &doc); derr != nil {
			err = fmt.Errorf("-c %s: not a TOML list of hook groups: %w", key, derr)
			continue
		}
		groups, cerr := asGroups(doc.V)
		if cerr != nil {
			err = cerr
			continue
		}
		set[ev] = append(set[ev], groups...)
	}
	if data, rerr := os.ReadFile(filepath.Join(codexHome(), "hooks.json")); rerr == nil {
		var f struct {
			Hooks hookSet `json:"hooks"`
		}
		if jerr := json.Unmarshal(data, &f); jerr == nil {
			for ev, g := range f.Hooks {
				set[ev] = append(set[ev], g...)
			}
		}
	}
	if !enabled {
		return hookSet{}, false, false, err
	}
	return set, true, len(set) > 0 && !ar.bypassHookTrust, err
}

// asGroups converts decoded hook groups to matcherGroups.
func asGroups(v any) ([]matcherGroup, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var g []matcherGroup
	return g, json.Unmarshal(b, &g)
}

// loadGeminiHooks reads the hooks of the system settings file and of the
// user's settings.json.
func loadGeminiHooks() (hookSet, error) {
	set := hookSet{}
	var errs []string
	for _, p := range []string{os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"), filepath.Join(geminiDir(), "settings.json")} {
		if p == "" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			if !os.IsNotExist(err) {
				errs = append(errs, err.Error())
			}
			continue
		}
		var s struct {
			Hooks hookSet `json:"hooks"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			errs = append(errs, p+": "+err.Error())
			continue
		}
		for ev, g := range s.Hooks {
			set[ev] = append(set[ev], g...)
		}
	}
	if len(errs) > 0 {
		return set, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return set, nil
}

// shape turns one of the fake's Claude-named events into the contract's:
// its name and extra fields, or ok false when the CLI has no such hook.
func (a *agent) shape(event string, fields map[string]any) (string, map[string]any, bool) {
	switch a.contract {
	case contractCodex:
		out := map[string]any{"model": a.model, "permission_mode": a.permissionMode()}
		switch event {
		case "SessionStart":
			out["source"] = fields["source"]
		case "UserPromptSubmit":
			out["prompt"], out["turn_id"] = fields["prompt"], fields["prompt_id"]
		case "Stop":
			out["turn_id"], out["stop_hook_active"], out["last_assistant_message"] = fields["prompt_id"], false, fields["last_assistant_message"]
		case "PostToolUse":
			out["turn_id"], out["tool_name"], out["tool_input"], out["tool_response"], out["tool_use_id"] =
				a.curPromptID(), fields["tool_name"], fields["tool_input"], fields["tool_response"], fields["tool_use_id"]
		case "Notification":
			if fields["notification_type"] != "permission_prompt" {
				return "", nil, false
			}
			event = "PermissionRequest"
			out["turn_id"], out["tool_name"] = a.curPromptID(), a.curTool()
		default: // no SessionEnd
			return "", nil, false
		}
		return event, out, true
	case contractGemini:
		out := map[string]any{"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z")}
		switch event {
		case "SessionStart":
			out["source"] = fields["source"]
		case "UserPromptSubmit":
			event, out["prompt"] = "BeforeAgent", fields["prompt"]
		case "Stop":
			event = "AfterAgent"
			out["prompt"], out["prompt_response"], out["stop_hook_active"] = a.lastPrompt, fields["last_assistant_message"], false
		case "Notification":
			typ := fields["notification_type"]
			if typ == "permission_prompt" {
				typ = "ToolPermission"
			}
			out["notification_type"], out["message"], out["details"] = typ, fields["message"], map[string]any{}
		case "SessionEnd":
			out["reason"] = "exit"
		default:
			return "", nil, false
		}
		return event, out, true
	}
	return event, fields, true
}

func (a *agent) curPromptID() string {
	if a.cur != nil {
		return a.cur.promptID
	}
	return ""
}

func (a *agent) curTool() string {
	if a.cur != nil && a.cur.tool != nil {
		return a.cur.tool.name
	}
	return ""
}

// sessionFilePath is where the contract keeps the conversation: Claude's
// transcript, Codex's rollout file, the Gemini CLI's session file.
func (a *agent) sessionFilePath() string {
	switch a.contract {
	case contractCodex:
		if a.codexPath == "" {
			t := a.started
			a.codexPath = filepath.Join(codexHome(), "sessions", t.Format("2006"), t.Format("01"), t.Format("02"),
				"rollout-"+t.Format("2006-01-02T15-04-05")+"-"+a.sessionID+".jsonl")
		}
		return a.codexPath
	case contractGemini:
		return a.geminiPath
	}
	return a.claudeTranscriptPath()
}

// codexRolloutRE finds a rollout file's id.
var codexRolloutRE = regexp.MustCompile(`^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(.+)\.jsonl$`)

// findCodexSession is the rollout file of id ("" when none).
func findCodexSession(id string) string {
	m, _ := filepath.Glob(filepath.Join(codexHome(), "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	for _, p := range m {
		if s := codexRolloutRE.FindStringSubmatch(filepath.Base(p)); s != nil && s[1] == id {
			return p
		}
	}
	return ""
}

// codexLine appends one rollout line (timestamp, type, payload, ordinal).
func (a *agent) codexLine(typ string, payload map[string]any, meta bool) {
	if os.Getenv("FAKE_AGENT_CODEX_HIDE_ID") == "1" {
		return
	}
	if a.codexFile == nil {
		f := a.openAppend(a.sessionFilePath())
		if f == nil {
			return
		}
		a.codexFile = f // held open while the fake runs, as Codex does
		if !a.resumed {
			a.codexLine("session_meta", map[string]any{"id": a.sessionID, "session_id": a.sessionID, "cwd": a.cwd,
				"cli_version": "0.171.0", "originator": "codex-tui", "source": "cli", "model_provider": "fake",
				"base_instructions": map[string]any{"text": "fake instructions"}, "timestamp": now()}, false)
		}
	}
	a.ordinal++
	line := map[string]any{"timestamp": now(), "type": typ, "payload": payload, "ordinal": a.ordinal}
	if meta {
		line["metadata"] = map[string]any{}
	}
	if _, err := a.codexFile.Write(jsonLine(line)); err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
	}
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// codexMessage is a response_item message payload.
func codexMessage(role, partType, text string) map[string]any {
	p := map[string]any{"type": "message", "role": role, "id": "msg_" + strings.ReplaceAll(uuid.NewString(), "-", ""),
		"content": []any{map[string]any{"type": partType, "text": text}}}
	if role == "assistant" {
		p["status"] = "completed"
	}
	return p
}

// geminiSlug registers cwd in projects.json (its slug: the base name in
// lower case, '-' for other characters) and returns the slug.
func geminiSlug(dir, cwd string) (string, error) {
	reg := struct {
		Projects map[string]string `json:"projects"`
	}{Projects: map[string]string{}}
	path := filepath.Join(dir, "projects.json")
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &reg)
		if reg.Projects == nil {
			reg.Projects = map[string]string{}
		}
	}
	if slug := reg.Projects[cwd]; slug != "" {
		return slug, nil
	}
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(filepath.Base(cwd)))
	slug := base
	taken := map[string]bool{}
	for _, s := range reg.Projects {
		taken[s] = true
	}
	for n := 1; taken[slug]; n++ {
		slug = fmt.Sprintf("%s-%d", base, n)
	}
	reg.Projects[cwd] = slug
	if err := os.MkdirAll(filepath.Join(dir, "tmp", slug, "chats"), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "tmp", slug, ".project_root"), []byte(cwd), 0o600); err != nil {
		return "", err
	}
	data, _ := json.Marshal(reg)
	return slug, os.WriteFile(path, data, 0o600)
}

// findGeminiSession is the session file of id for cwd ("" when none).
func findGeminiSession(cwd, id string) string {
	if len(id) < 8 {
		return ""
	}
	dir := geminiDir()
	data, err := os.ReadFile(filepath.Join(dir, "projects.json"))
	if err != nil {
		return ""
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if json.Unmarshal(data, &reg) != nil || reg.Projects[cwd] == "" {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(dir, "tmp", reg.Projects[cwd], "chats", "session-*-"+id[:8]+".jsonl"))
	for _, p := range m {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(data), "\n")
		var meta struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal([]byte(first), &meta) == nil && meta.SessionID == id {
			return p
		}
	}
	return ""
}

// openGemini creates (fresh) or reopens (resume) the session file and
// writes its metadata line.
func (a *agent) openGemini() error {
	dir := geminiDir()
	if a.geminiPath == "" {
		slug, err := geminiSlug(dir, a.cwd)
		if err != nil {
			return err
		}
		a.geminiPath = filepath.Join(dir, "tmp", slug, "chats",
			"session-"+a.started.Format("2006-01-02T15-04")+"-"+a.sessionID[:min(8, len(a.sessionID))]+".jsonl")
	}
	sum := sha256.Sum256([]byte(a.cwd))
	a.geminiLine(map[string]any{"sessionId": a.sessionID, "projectHash": hex.EncodeToString(sum[:]),
		"startTime": now(), "lastUpdated": now(), "kind": "main"})
	return nil
}

// geminiLine appends one session-file line.
func (a *agent) geminiLine(line map[string]any) {
	f, err := os.OpenFile(a.geminiPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
		return
	}
	defer f.Close()
	if _, err := f.Write(jsonLine(line)); err != nil {
		a.log.write(entry{Kind: "transcript_error", Error: err.Error()})
	}
}

// recordUserAs writes a prompt in the contract's session file.
func (a *agent) recordUserAs(promptID, text string) {
	a.lastPrompt = text
	switch a.contract {
	case contractCodex:
		a.codexLine("event_msg", map[string]any{"type": "task_started", "turn_id": promptID, "started_at": time.Now().Unix()}, false)
		a.codexLine("response_item", codexMessage("user", "input_text", text), true)
	case contractGemini:
		a.geminiLine(map[string]any{"id": uuid.NewString(), "timestamp": now(), "type": "user", "content": []any{map[string]any{"text": text}}})
		a.geminiLine(map[string]any{"$set": map[string]any{"lastUpdated": now()}})
	default:
		a.recordUser(promptID, text)
	}
}

// recordAnswerAs writes an answer in the contract's session file.
func (a *agent) recordAnswerAs(promptID, prompt, answer string) {
	switch a.contract {
	case contractCodex:
		a.codexLine("response_item", codexMessage("assistant", "output_text", answer), true)
		a.codexLine("event_msg", map[string]any{"type": "token_count", "info": map[string]any{"last_token_usage": map[string]any{
			"input_tokens": 10 + len(prompt), "cached_input_tokens": 0, "cache_write_input_tokens": 0, "output_tokens": 1 + len(answer),
			"reasoning_output_tokens": 0, "total_tokens": 11 + len(prompt) + len(answer)}}}, false)
		a.codexLine("event_msg", map[string]any{"type": "task_complete", "turn_id": promptID, "last_agent_message": answer}, false)
	case contractGemini:
		a.geminiLine(map[string]any{"id": uuid.NewString(), "timestamp": now(), "type": "gemini", "content": answer,
			"model": a.model, "thoughts": []any{}, "tokens": map[string]any{"input": 10 + len(prompt), "output": 1 + len(answer),
				"cached": 0, "thoughts": 0, "tool": 0, "total": 11 + len(prompt) + len(answer)}})
		a.geminiLine(map[string]any{"$set": map[string]any{"lastUpdated": now()}})
	default:
		a.recordAnswer(prompt, answer)
		a.record(map[string]any{"type": "last-prompt", "lastPrompt": prompt})
	}
}
