package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/the-loop-dev/the-loop/sdk"
)

// TestDashboard_LoginAndLogoutAllWithTheOperatorsToken: the client gets a
// one-time login (its code in the link's fragment) and ends every
// session; without the token both are ErrUnauthorized.
func TestDashboard_LoginAndLogoutAllWithTheOperatorsToken(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	c := sdk.New(s.url, sdk.WithStateRoot(s.root))
	login, err := c.DashboardLogin(ctx)
	if err != nil || len(login.Code) < 32 || login.LoginPath != "/login#code="+login.Code || login.ExpiresAt == "" {
		t.Fatalf("DashboardLogin: %+v, %v", login, err)
	}
	n, err := c.LogoutAllDashboards(ctx)
	if err != nil || n != 0 {
		t.Fatalf("LogoutAllDashboards: %d, %v (no session was live)", n, err)
	}
	anon := sdk.New(s.url, sdk.WithToken(""))
	if _, err := anon.DashboardLogin(ctx); !errors.Is(err, sdk.ErrUnauthorized) || !strings.Contains(err.Error(), "token") {
		t.Fatalf("DashboardLogin without the token: %v", err)
	}
	if _, err := anon.LogoutAllDashboards(ctx); !errors.Is(err, sdk.ErrUnauthorized) {
		t.Fatalf("LogoutAllDashboards without the token: %v", err)
	}
}
