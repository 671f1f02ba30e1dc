package config

import "testing"

// service.auth and standingSessions.mcp.

func TestLoad_AuthAndStandingMCP(t *testing.T) {
	cfg, err := Load(writeConfig(t, "service: {auth: none}\nstandingSessions: {enabled: true, mcp: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Service.AuthOff() || !cfg.StandingMCP {
		t.Fatalf("auth %q, standing mcp %v", cfg.Service.Auth, cfg.StandingMCP)
	}
	def := Default()
	if def.Service.Auth != AuthToken || def.Service.AuthOff() || def.StandingMCP {
		t.Fatalf("defaults: auth %q, standing mcp %v", def.Service.Auth, def.StandingMCP)
	}
}

func TestLoad_AuthNoneWithExposedIsRefusedNamingBoth(t *testing.T) {
	_, err := Load(writeConfig(t, "service: {host: 0.0.0.0, exposed: true, auth: none}\n"))
	if err == nil {
		t.Fatal("loaded")
	}
	mustContain(t, err.Error(), "service.auth: none", "service.exposed: true")
	if errs := Validate([]byte("service: {exposed: true, auth: none}\n")); len(errs) != 1 {
		t.Fatalf("validate: %v", errs)
	}
}

func TestLoad_UnknownAuthIsRefused(t *testing.T) {
	_, err := Load(writeConfig(t, "service: {auth: basic}\n"))
	if err == nil {
		t.Fatal("loaded")
	}
	mustContain(t, err.Error(), "service.auth")
}
