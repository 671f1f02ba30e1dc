package hearing

import (
	"slices"

	loop "github.com/the-loop-dev/the-loop"
)

// canonicalHook gives a Codex or Gemini CLI payload the event names and
// fields of Claude Code's, which hear reads (docs/harnesses.md, "How the-loop
// wires Codex and Gemini"):
//
//	Gemini BeforeAgent         UserPromptSubmit (no prompt id: hear gives the turn one)
//	Gemini AfterAgent          Stop, prompt_response as the answer
//	Gemini Notification        ToolPermission as permission_prompt
//	Codex PermissionRequest    Notification permission_prompt
//	Codex turn_id              the prompt id
//
// A Claude Code payload passes unchanged.
func canonicalHook(p HookPayload) HookPayload {
	switch p.Event {
	case "BeforeAgent":
		p.Event = "UserPromptSubmit"
	case "AfterAgent":
		p.Event = "Stop"
		if p.LastMessage == "" {
			p.LastMessage = p.PromptResponse
		}
	case "PermissionRequest":
		p.Event, p.NotificationType = "Notification", "permission_prompt"
		if p.Message == "" {
			p.Message = "the agent asks permission to use " + p.ToolName
		}
	case "Notification":
		if p.NotificationType == "ToolPermission" {
			p.NotificationType = "permission_prompt"
		}
	}
	if p.PromptID == "" && p.TurnID != "" {
		p.PromptID = p.TurnID
	}
	return p
}

// adoptStart takes the conversation id of a fresh start of a harness that
// chooses its own (codex) from its SessionStart (source startup) while the
// start's claim does not know it yet — only from a hook command whose
// parent chain reaches the session's own agent pane — so the hooks of the
// boot turn are heard before the starter has read the id back from the
// pane (the claim keeps it as HeardID; its HarnessSessionID stays the
// pane's tag). The starter's own capture (from the session file the pane
// holds open) is what the record finally keeps.
func (s *Hearer) adoptStart(h *hooked, p HookPayload, d loop.HookDelivery, panes []int) bool {
	if !h.captures || h.claim == nil || h.claim.Op != "start" || h.claim.Resume || p.SessionID == "" ||
		p.Event != "SessionStart" || p.Source != "startup" {
		return false
	}
	if !slices.ContainsFunc(d.Parents, func(pid int) bool { return slices.Contains(panes, pid) }) {
		return false
	}
	h.claim.HeardID = p.SessionID
	return true
}

// answered reports whether h holds an answer to prompt id.
func answered(h *loop.Hearing, id string) bool {
	return id != "" && slices.ContainsFunc(h.Answers, func(a loop.Answer) bool { return a.PromptID == id })
}
