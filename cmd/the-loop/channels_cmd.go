//go:build !loop_omit_service

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/channels"
	"github.com/the-loop-dev/the-loop/channels/github"
	"github.com/the-loop-dev/the-loop/channels/slack"
	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/credential"
	"github.com/the-loop-dev/the-loop/threadlog"
)

// Run polls once and prints the summary; a skipped cycle exits 1.
func (c *ChannelsPollCmd) Run(a *App, cfg *config.Config) error {
	ctx, stop := signalContext()
	defer stop()
	var sum loop.PollSummary
	var err error
	remote := false
	if cfg.Service.Enabled {
		if remote, err = a.viaService(cfg); err != nil {
			return err
		}
	}
	if remote {
		sum, err = a.client(cfg).Channels.Poll(ctx)
	} else {
		db, oerr := a.OpenStore(cfg, true)
		if oerr != nil {
			return oerr
		}
		defer db.Close()
		svc := a.Lifecycle(fixed(cfg), db, "channels", false)
		_ = svc.RememberCredentials() // best-effort: the shapes and values are redacted all the same
		p := &channels.Poller{Redactor: svc.Redactor, Threads: &threadlog.Log{DB: svc.DB, Events: svc}, Standing: svc.Standing(fixed(cfg)), WorkItems: &github.Mirror{WorkItems: svc.WorkItems(fixed(cfg)), Events: svc}, Secrets: func(cfg *config.Config) []string { return credential.SecretValues(cfg, os.Getenv) }, Log: slog.New(slog.NewTextHandler(a.Stderr, nil))}
		sum, err = p.Poll(ctx, cfg)
	}
	if err != nil {
		return err
	}
	if c.Format == "json" {
		if err := writeJSON(a.Stdout, sum); err != nil {
			return err
		}
		return okExit(sum.Skipped == "")
	}
	if sum.Skipped != "" {
		fmt.Fprintf(a.Stdout, "skipped: %s\n", termSafe(sum.Skipped))
		return &exitError{1}
	}
	fmt.Fprintf(a.Stdout, "%d repl(ies): %d processed (%d delivered), %d dropped\n", sum.Replies, sum.Processed, sum.Delivered, sum.Dropped)
	return nil
}

// slackStatus is the resolved channels.slack, as `channels status` shows it.
type slackStatus struct {
	Enabled         bool     `json:"enabled"`
	Channel         string   `json:"channel"`
	APIURL          string   `json:"apiUrl"`
	BotTokenEnv     string   `json:"botTokenEnv"`
	TokenPresent    bool     `json:"tokenPresent"`
	AuthorizedUsers []string `json:"authorizedUsers"`
	Verbosity       string   `json:"verbosity"`
	ReadMode        string   `json:"readMode"`
	IntervalSeconds int      `json:"intervalSeconds"`
	ReadSupported   bool     `json:"readSupported"`
	// Reading says whether a poll cycle would read Slack, or why not.
	Reading string `json:"reading"`
	// Environment says whose environment TokenPresent describes: always
	// "cli" — the service polls with its own (the one `the-loop start` or
	// `the-loop serve` ran in).
	Environment string `json:"environment"`
	// ServiceTokenPresent says whether the service's environment holds the
	// token, when this state root's service answers (absent otherwise).
	ServiceTokenPresent *bool `json:"serviceTokenPresent,omitempty"`
}

// Run prints the resolved settings.
func (c *ChannelsStatusCmd) Run(a *App, cfg *config.Config) error {
	st := resolveSlack(cfg)
	if cfg.Service.Enabled {
		st.ServiceTokenPresent = a.serviceSeesToken(cfg)
	}
	if c.Format == "json" {
		return writeJSON(a.Stdout, st)
	}
	api := st.APIURL + " (channels.slack.apiUrl)"
	if st.APIURL == "" {
		api = "Slack's own Web API (https://slack.com/api/)"
	}
	token := "present in " + st.BotTokenEnv
	if !st.TokenPresent {
		token = "missing — export " + st.BotTokenEnv
	}
	token += " (in this CLI's environment)"
	service := "not answering — it reads the token from the environment it was started in"
	switch {
	case st.ServiceTokenPresent == nil && !cfg.Service.Enabled:
		service = "disabled (service.enabled is false): `the-loop channels poll` reads Slack with this CLI's environment"
	case st.ServiceTokenPresent == nil:
	case *st.ServiceTokenPresent:
		service = "sees the bot token in its own environment"
	default:
		service = "does NOT see " + st.BotTokenEnv + " in its own environment — export it where you run `the-loop start`, then `the-loop restart`"
	}
	users := strings.Join(st.AuthorizedUsers, ", ")
	if users == "" {
		users = "none — every reply is dropped (an empty list admits nobody)"
	}
	read := st.ReadMode
	switch st.ReadMode {
	case "poll":
		read = fmt.Sprintf("poll, every %ds (by the service; `the-loop channels poll` runs one cycle)", st.IntervalSeconds)
	case "socket":
		read = "socket — unsupported: this the-loop has no Socket Mode; set read.mode: poll"
	case "off":
		read = "off — replies are not read"
	}
	enabled := "enabled"
	if !st.Enabled {
		enabled = "disabled (channels.slack.enabled is false)"
	}
	channel := st.Channel
	if channel == "" {
		channel = "- (none: only a session with its own slack.channel can be announced)"
	}
	rows := [][2]string{
		{"slack", enabled},
		{"channel", channel},
		{"api url", api},
		{"bot token", token},
		{"service", service},
		{"authorized users", users},
		{"verbosity", st.Verbosity},
		{"read mode", read},
	}
	for _, r := range rows {
		fmt.Fprintf(a.Stdout, "%-18s%s\n", r[0]+":", termSafe(r[1]))
	}
	return nil
}

// resolveSlack is channels.slack as this process resolves it. The token is
// looked up only to say whether it is there.
func resolveSlack(cfg *config.Config) slackStatus {
	sl := cfg.Slack
	client := slack.New(sl)
	users := sl.AuthorizedUsers
	if users == nil {
		users = []string{}
	}
	reading := channels.Skipped(cfg)
	if reading == "" {
		reading = "yes"
	}
	return slackStatus{
		Enabled:         sl.Enabled,
		Channel:         sl.Channel,
		APIURL:          client.APIURL(),
		BotTokenEnv:     sl.BotTokenEnv,
		TokenPresent:    client.CheckToken() == nil,
		AuthorizedUsers: users,
		Verbosity:       sl.Verbosity,
		ReadMode:        sl.ReadMode,
		IntervalSeconds: sl.IntervalSeconds,
		ReadSupported:   sl.ReadMode == "poll",
		Reading:         reading,
		Environment:     "cli",
	}
}

// serviceSeesToken asks this state root's service, when it answers,
// whether its own environment holds the bot token (nil: not known).
func (a *App) serviceSeesToken(cfg *config.Config) *bool {
	if !a.probe(cfg, 2*time.Second).ours {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := a.client(cfg).Status(ctx)
	if err != nil || len(rep.Services) == 0 {
		return nil
	}
	return rep.Services[0].SlackTokenPresent
}
