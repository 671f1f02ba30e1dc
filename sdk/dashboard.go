package sdk

import (
	"context"
	"net/http"
)

// DashboardLogin is a one-time login for the web dashboard (POST
// /api/v1/dashboard/codes).
type DashboardLogin struct {
	// Code works once, until ExpiresAt.
	Code string `json:"code"`
	// LoginPath is the path to open on the service's address:
	// /login#code=<code> (in the fragment, which the browser keeps to
	// itself; the page exchanges it for a session secret).
	LoginPath string `json:"loginPath"`
	// ExpiresAt is when the code stops working (UTC, RFC 3339).
	ExpiresAt string `json:"expiresAt"`
}

// DashboardLogin asks the service for a login code for the dashboard: what
// `the-loop dashboard` prints as a link. It takes the operator's token;
// with service.web.enabled false it is loop.ENOTFOUND.
func (c *Client) DashboardLogin(ctx context.Context) (DashboardLogin, error) {
	var login DashboardLogin
	err := c.c.do(ctx, http.MethodPost, "/api/v1/dashboard/codes", nil, struct{}{}, &login)
	return login, err
}

// LogoutAllDashboards ends every dashboard session and every login code not
// yet used, and returns how many live sessions ended (`the-loop dashboard
// --logout-all`). It takes the operator's token.
func (c *Client) LogoutAllDashboards(ctx context.Context) (int, error) {
	var res struct {
		Revoked int `json:"revoked"`
	}
	err := c.c.do(ctx, http.MethodPost, "/api/v1/dashboard/logout-all", nil, struct{}{}, &res)
	return res.Revoked, err
}
