package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	loop "github.com/the-loop-dev/the-loop"
)

// StandingApprovalsCmd is `the-loop standing approvals [NAME]`.
type StandingApprovalsCmd struct {
	Name   string `arg:"" optional:"" help:"The session (default: every session's)."`
	All    bool   `help:"List the settled ones too (allowed, denied, answered at the terminal, expired, withdrawn), newest first."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run lists the approvals.
func (c *StandingApprovalsCmd) Run(ctx context.Context, a *App, api services) error {
	list, err := api.Approvals.Approvals(ctx, c.Name)
	if err != nil {
		return err
	}
	if !c.All {
		list = pendingOf(list)
	}
	if c.Format == "json" {
		return writeJSON(a.Stdout, list)
	}
	renderApprovals(a.Stdout, a.Stderr, list, c.All)
	return nil
}

// pendingOf is the pending approvals of list, in its order.
func pendingOf(list []loop.Approval) []loop.Approval {
	out := []loop.Approval{}
	for _, ap := range list {
		if ap.Status == loop.ApprovalPending {
			out = append(out, ap)
		}
	}
	return out
}

// approvalInputCell is the width an input gets in the table; the whole is
// in --format json and in the attention post.
const approvalInputCell = 72

// renderApprovals writes the approvals' table: ID, Session, Tool,
// Requested, Status, By, Input (one line, cut).
func renderApprovals(stdout, stderr io.Writer, list []loop.Approval, all bool) {
	if len(list) == 0 {
		if all {
			fmt.Fprintln(stderr, "(no approvals recorded)")
		} else {
			fmt.Fprintln(stderr, "(no pending approvals; --all lists the settled ones)")
		}
		return
	}
	table := [][]string{{"ID", "Session", "Tool", "Requested", "Status", "By", "Input"}}
	for _, ap := range list {
		input := oneLine(approvalText(ap))
		if r := []rune(input); len(r) > approvalInputCell {
			input = string(r[:approvalInputCell-1]) + "…"
		}
		by := ap.By
		if by == "" {
			by = "-"
		}
		table = append(table, []string{ap.ID, ap.Session, ap.Tool, ap.RequestedAt, ap.Status, by, input})
	}
	writeTable(stdout, table)
	if p := pendingOf(list); len(p) > 0 {
		fmt.Fprintf(stderr, "decide: the-loop standing approve %s %s  or  the-loop standing deny %[1]s %[2]s --message TEXT\n", termSafe(p[0].Session), termSafe(p[0].ID))
	}
}

// approvalText is what an approver reads of an approval's input: a Bash
// command as it is, else its JSON.
func approvalText(ap loop.Approval) string {
	var in struct {
		Command *string `json:"command"`
	}
	if ap.Tool == "Bash" && json.Unmarshal(ap.Input, &in) == nil && in.Command != nil {
		return *in.Command
	}
	return string(ap.Input)
}

// StandingApproveCmd is `the-loop standing approve NAME [ID]`.
type StandingApproveCmd struct {
	Name   string `arg:"" help:"The session."`
	ID     string `arg:"" optional:"" help:"The approval (default: the session's one pending approval)."`
	Format string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run allows.
func (c *StandingApproveCmd) Run(ctx context.Context, a *App, api services) error {
	return decideApproval(ctx, a, api, c.Name, c.ID, loop.ApprovalDecision{Decision: loop.DecisionAllow}, c.Format)
}

// StandingDenyCmd is `the-loop standing deny NAME [ID] --message TEXT`.
type StandingDenyCmd struct {
	Name    string `arg:"" help:"The session."`
	ID      string `arg:"" optional:"" help:"The approval (default: the session's one pending approval)."`
	Message string `short:"m" help:"What the agent reads as the tool's error, framed with who denied (at most 4 KiB)." placeholder:"TEXT"`
	Format  string `enum:"text,json" default:"text" help:"Output format (text or json)."`
}

// Run denies.
func (c *StandingDenyCmd) Run(ctx context.Context, a *App, api services) error {
	return decideApproval(ctx, a, api, c.Name, c.ID, loop.ApprovalDecision{Decision: loop.DecisionDeny, Message: c.Message}, c.Format)
}

// decideApproval decides approval id of session name (id "": its one
// pending approval — several are EINVALID, listing them; none ENOTFOUND).
func decideApproval(ctx context.Context, a *App, api services, name, id string, d loop.ApprovalDecision, format string) error {
	if !loop.ValidName(name) {
		return loop.Invalid("invalid standing-session name '%s' (expected %s)", name, loop.NameRE)
	}
	if id == "" {
		list, err := api.Approvals.Approvals(ctx, name)
		if err != nil {
			return err
		}
		pending := pendingOf(list)
		switch len(pending) {
		case 0:
			return loop.NotFound("standing session %s has no pending approval (`the-loop standing approvals --all %[1]s` lists the settled ones)", name)
		case 1:
			id = pending[0].ID
		default:
			var ids []string
			for _, ap := range pending {
				ids = append(ids, ap.ID+" ("+ap.Tool+": "+oneLine(cut(approvalText(ap), 40))+")")
			}
			return loop.Invalid("standing session %s has %d pending approvals: %s; name one: `the-loop standing %s %[1]s ID`",
				name, len(pending), strings.Join(ids, ", "), decisionVerb(d.Decision))
		}
	}
	d.Session = name
	ap, err := api.Approvals.Decide(ctx, id, d, "operator")
	if err != nil {
		return err
	}
	if format == "json" {
		return writeJSON(a.Stdout, ap)
	}
	fmt.Fprintf(a.Stdout, "%s  %s  %s\n", termSafe(ap.ID), termSafe(ap.Session), ap.Status)
	return nil
}

// decisionVerb is the CLI verb of a decision.
func decisionVerb(decision string) string {
	if decision == loop.DecisionAllow {
		return "approve"
	}
	return "deny"
}

// cut is s cut to n runes, an ellipsis marking the cut.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
