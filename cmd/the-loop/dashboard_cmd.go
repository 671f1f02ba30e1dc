package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/config"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// DashboardCmd is `the-loop dashboard [--logout-all]`: print a login link
// for the web dashboard, or end every dashboard session.
type DashboardCmd struct {
	LogoutAll bool `name:"logout-all" help:"End every dashboard session (and every login link not yet used) instead of printing a link."`
}

// Run asks the running service (with the operator's token) for a one-time
// login code and prints http://<host>:<port>/login#code=<code>; the link
// works once, within 60 s. The code rides in the fragment, which the
// browser keeps to itself: the login page exchanges it for a session
// secret of its origin's own.
func (c *DashboardCmd) Run(a *App) error {
	cfg, err := a.LoadConfig()
	if err != nil {
		return err
	}
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
	if c.LogoutAll {
		var res struct {
			Revoked int `json:"revoked"`
		}
		if err := dashboardPost(ctx, cfg, loophttp.DashboardLogoutAllPath, &res); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.Stdout, "ended %d dashboard session(s); open a new link from `the-loop dashboard` to log in again\n", res.Revoked)
		return err
	}
	var code loophttp.DashboardCode
	if err := dashboardPost(ctx, cfg, loophttp.DashboardCodesPath, &code); err != nil {
		return err
	}
	fmt.Fprintln(a.Stderr, "open this link within 60 s; it works once:")
	_, err = fmt.Fprintln(a.Stdout, serviceURL(cfg)+code.LoginPath)
	return err
}

// dashboardURL is the dashboard's address as `serve` and `start` print it
// (no secret in it).
func dashboardURL(cfg *config.Config) string { return serviceURL(cfg) + "/" }

// dashboardPost POSTs {} to one of the dashboard's routes with the
// operator's token and decodes the answer into out.
func dashboardPost(ctx context.Context, cfg *config.Config, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodPost, serviceURL(cfg)+path, strings.NewReader("{}"))
	if err != nil {
		return loop.Internal("building the request to %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token := serviceToken(cfg); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := nethttp.DefaultClient.Do(req)
	if err != nil {
		return loop.Errorf(loop.EINTERNAL, "the-loop service at %s did not answer %s: %w", serviceURL(cfg), path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return loop.Internal("reading the answer to %s: %w", path, err)
	}
	if resp.StatusCode != nethttp.StatusOK {
		var e loophttp.ErrorBody
		_ = json.Unmarshal(body, &e)
		detail := e.Detail
		if detail == "" {
			detail = strings.TrimSpace(string(bytes.ToValidUTF8(body, nil)))
		}
		code := loop.EINTERNAL
		switch resp.StatusCode {
		case nethttp.StatusNotFound:
			code = loop.ENOTFOUND
		case nethttp.StatusBadRequest, nethttp.StatusUnauthorized, nethttp.StatusForbidden:
			code = loop.EINVALID
		}
		return loop.Errorf(code, "%s", termSafe(detail))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return loop.Internal("the answer to %s is not what the-loop sends (%v): %s", path, err, termSafe(string(body)))
	}
	return nil
}
