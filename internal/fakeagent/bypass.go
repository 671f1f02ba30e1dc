//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Claude Code 2.1.332's bypassPermissions mode, as measured
// (docs/claude-code.md): refused for root at once; otherwise a consent
// screen before the input box, until its settings say it was accepted.

// bypassRootRefusal is what the CLI prints run by root in the mode.
const bypassRootRefusal = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"

// consentScreen is the consent screen as the CLI draws it (the menu's
// items are not numbered; No is preselected).
const consentScreen = "\r\n────────────────────────────────────────────────────────────\r\n" +
	"  WARNING: Claude Code running in Bypass Permissions mode\r\n\r\n" +
	"  In Bypass Permissions mode, Claude Code will not ask for your approval before running potentially dangerous\r\n  commands.\r\n" +
	"  This mode should only be used in a sandboxed container/VM that has restricted internet access and can easily be\r\n  restored if damaged.\r\n\r\n" +
	"  By proceeding, you accept all responsibility for actions taken while running in Bypass Permissions mode.\r\n\r\n" +
	"  https://code.claude.com/docs/en/security\r\n\r\n" +
	"  ❯ No, exit\r\n    Yes, I accept\r\n\r\n  Enter to confirm · Esc to cancel\r\n"

// bypassRefused reports that the CLI refuses the mode: it is asked for,
// and this process runs as root (FAKE_AGENT_AS_USER=1 makes a root test
// run behave as another user's).
func (a *agent) bypassRefused() bool {
	return a.contract == contractClaude && a.permMode == "bypassPermissions" &&
		os.Geteuid() == 0 && os.Getenv("FAKE_AGENT_AS_USER") != "1"
}

// consentAsked reports that the consent screen comes first: the mode is
// asked for and <config dir>/settings.json does not record its acceptance.
func (a *agent) consentAsked() bool {
	if a.contract != contractClaude || a.permMode != "bypassPermissions" {
		return false
	}
	var s struct {
		Skip bool `json:"skipDangerousModePermissionPrompt"`
	}
	data, err := os.ReadFile(filepath.Join(a.configDir, "settings.json"))
	return err != nil || json.Unmarshal(data, &s) != nil || !s.Skip
}

// consent draws the consent screen and reads its keys: Enter on "No, exit"
// exits 1, Esc exits 0 (exit is then true, with the code), Down moves to
// "Yes, I accept" and Enter there accepts, recording it in settings.json.
func (a *agent) consent(term *terminal) (code int, exit bool) {
	a.printf("%s", consentScreen)
	a.log.write(entry{Kind: "bypass_consent"})
	yes := false
	buf := make([]byte, 64)
	for {
		n, err := term.read(buf)
		if err != nil {
			return 1, true
		}
		keys := string(buf[:n])
		switch {
		case strings.Contains(keys, "\x1b[B"):
			yes = true
		case strings.Contains(keys, "\x1b[A"):
			yes = false
		case keys == "\x1b":
			a.log.write(entry{Kind: "bypass_declined", Code: 0})
			return 0, true
		case strings.ContainsAny(keys, "\r\n") && !yes:
			a.log.write(entry{Kind: "bypass_declined", Code: 1})
			return 1, true
		case strings.ContainsAny(keys, "\r\n"):
			err := a.acceptBypass()
			a.log.write(entry{Kind: "bypass_accepted", Error: errText(err)})
			return 0, false
		}
	}
}

// acceptBypass records the acceptance as the CLI does:
// skipDangerousModePermissionPrompt in <config dir>/settings.json, the
// file's other keys kept.
func (a *agent) acceptBypass() error {
	path := filepath.Join(a.configDir, "settings.json")
	doc := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &doc)
	}
	doc["skipDangerousModePermissionPrompt"] = true
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(a.configDir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o600)
}

// refuseBypass prints the root refusal and logs it.
func (a *agent) refuseBypass() int {
	fmt.Fprintln(os.Stderr, bypassRootRefusal)
	a.log.write(entry{Kind: "bypass_refused", Code: 1})
	return 1
}
