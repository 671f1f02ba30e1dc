package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// DoctorCmd is `the-loop doctor [--format json]`: every check an operator
// would otherwise make by hand on the first day (tmux, the socket, the
// harness CLIs, the state root and token file, the service port and its
// health, the config, the keys this the-loop ignores, whether the sessions
// outlive the login), each problem with its remedy. Exit 1 when something
// is wrong, 0 when only warnings (or nothing) were found.
type DoctorCmd struct {
	Format string `enum:"text,json" default:"text" help:"text (a table) or json (one object: healthy, checks)."`
}

// The statuses of a check.
const (
	checkOK      = "ok"
	checkWarning = "warning" // worth knowing; does not fail the doctor
	checkProblem = "problem" // something is wrong: exit 1
	checkNA      = "n/a"     // does not apply on this machine
)

// check is one line of the doctor's report.
type check struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Remedy string `json:"remedy,omitempty"`
}

// doctorReport is what --format json prints.
type doctorReport struct {
	Healthy  bool    `json:"healthy"`
	Problems int     `json:"problems"`
	Warnings int     `json:"warnings"`
	Checks   []check `json:"checks"`
}

// Run runs every check, prints the report and exits 1 when a check found a
// problem.
func (c *DoctorCmd) Run(a *App) error {
	checks := a.doctorChecks()
	rep := doctorReport{Checks: checks}
	for _, ch := range checks {
		switch ch.Status {
		case checkProblem:
			rep.Problems++
		case checkWarning:
			rep.Warnings++
		}
	}
	rep.Healthy = rep.Problems == 0
	if c.Format == "json" {
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printDoctor(a.Stdout, rep)
	}
	if !rep.Healthy {
		return &exitError{code: 1}
	}
	return nil
}

// printDoctor writes the report as a table, each remedy under its check,
// then a verdict.
func printDoctor(w io.Writer, rep doctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCHECK\tDETAIL")
	for _, ch := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", ch.Status, ch.Check, termLine(ch.Detail))
		if ch.Remedy != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", termLine(ch.Remedy))
		}
	}
	_ = tw.Flush()
	switch {
	case rep.Problems > 0:
		fmt.Fprintf(w, "%s, %s: fix the lines marked problem (each says how)\n", doctorPlural(rep.Problems, "problem"), doctorPlural(rep.Warnings, "warning"))
	case rep.Warnings > 0:
		fmt.Fprintf(w, "healthy, %s\n", doctorPlural(rep.Warnings, "warning"))
	default:
		fmt.Fprintln(w, "healthy")
	}
}

// termLine is s made safe for a terminal, on one line.
func termLine(s string) string {
	return termSafe(strings.Join(strings.Fields(s), " "))
}

// doctorPlural is "1 problem", "2 problems".
func doctorPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
