package main

import (
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
)

// DashboardCmd is `the-loop dashboard [--logout-all]`: print a login link
// for the web dashboard, or end every dashboard session.
type DashboardCmd struct {
	LogoutAll bool `name:"logout-all" help:"End every dashboard session (and every login link not yet used) instead of printing a link."`
}

// Run asks the running service (with the operator's token, through the
// CLI's own client of it) for a one-time
// login code and prints http://<host>:<port>/login#code=<code>; the link
// works once, within 60 s. The code rides in the fragment, which the
// browser keeps to itself: the login page exchanges it for a session
// secret of its origin's own.
func (c *DashboardCmd) Run(a *App, cfg *config.Config) error {
	if !cfg.Service.Enabled {
		return loop.Invalid("the dashboard is served by the service, and service.enabled is false; set it to true and run `the-loop start`")
	}
	if !c.LogoutAll && !cfg.Service.WebEnabled {
		return loop.Invalid("the dashboard is turned off (service.web.enabled: false); set it to true, then `the-loop restart`")
	}
	remote, err := a.viaService(cfg)
	if err != nil {
		return err
	}
	if !remote {
		return loop.Errorf(loop.ENOTFOUND, "the-loop service is not running at %s — start it with `the-loop start` (or `the-loop serve`)", serviceURL(cfg))
	}
	ctx, stop := signalContext()
	defer stop()
	client := a.client(cfg)
	if c.LogoutAll {
		n, err := client.LogoutAllDashboards(ctx)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.Stdout, "ended %d dashboard session(s); open a new link from `the-loop dashboard` to log in again\n", n)
		return err
	}
	login, err := client.DashboardLogin(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.Stderr, "open this link within 60 s; it works once:")
	_, err = fmt.Fprintln(a.Stdout, serviceURL(cfg)+login.LoginPath)
	return err
}

// dashboardURL is the dashboard's address as `serve` and `start` print it
// (no secret in it).
func dashboardURL(cfg *config.Config) string { return serviceURL(cfg) + "/" }
