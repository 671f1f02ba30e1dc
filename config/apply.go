package config

// apply reads the typed settings out of doc (already migrated and pruned),
// one top-level block at a time, each into the settings it configures.
// Values of the wrong type keep their default, so it never fails: the schema
// has reported them (and LoadTolerant relies on this).
func (c *Config) apply(doc map[string]any) {
	if v, ok := doc["version"]; ok && v != nil {
		c.Version = scalarString(v)
	}
	c.StateRoot = nonEmpty(mapping(doc["state"]), "root", c.StateRoot)
	c.Routing.apply(mapping(doc["routing"]))
	c.Service.apply(mapping(doc["service"]))
	standing := mapping(doc["standingSessions"])
	c.StandingMCP = boolean(standing, "mcp", c.StandingMCP)
	c.Supervision = readSupervision(standing, c.Supervision)
	c.EventLog.apply(mapping(doc["eventLog"]))
	c.Slack.apply(mapping(mapping(doc["channels"])["slack"]))
	gh := mapping(mapping(mapping(doc["integrations"])["github"])["cli"])
	c.GitHubBinary = nonEmpty(gh, "binary", c.GitHubBinary)
}

// apply reads the routing block: the harness defaults, its arguments,
// environment and binaries, tmux, harness trust and the control keywords.
func (r *Routing) apply(m map[string]any) {
	r.DefaultHarness = nonEmpty(m, "defaultHarness", r.DefaultHarness)
	r.SpawnWorkdir = nonEmpty(m, "spawnWorkdir", r.SpawnWorkdir)
	r.RegistryDir = str(m, "registryDir", r.RegistryDir)
	for h, v := range mapping(m["harnessArgs"]) {
		if args, ok := stringList(v); ok {
			r.HarnessArgs[h] = args
		}
	}
	r.HarnessEnv = StringMap(m["harnessEnv"])
	r.HarnessBinaries = StringMap(m["harnessBinaries"])
	r.Tmux.apply(mapping(m["tmux"]))
	ht := mapping(m["harnessTrust"])
	r.HarnessTrust.Enabled = boolean(ht, "enabled", r.HarnessTrust.Enabled)
	r.HarnessTrust.Scope = nonEmpty(ht, "scope", r.HarnessTrust.Scope)
	r.HarnessTrust.AcceptBypassPermissions = nonEmpty(ht, "acceptBypassPermissions", r.HarnessTrust.AcceptBypassPermissions)
	r.ControlKeywords = controlKeywords(mapping(mapping(m["control"])["keywords"]))
}

// apply reads routing.tmux. Durations never go negative, and
// submitSeconds only takes a positive value.
func (t *Tmux) apply(m map[string]any) {
	t.RemainOnExit = boolean(m, "remainOnExit", t.RemainOnExit)
	t.ResumeOnRespawn = boolean(m, "resumeOnRespawn", t.ResumeOnRespawn)
	t.ResumeProbeSeconds = max(0, number(m, "resumeProbeSeconds", t.ResumeProbeSeconds))
	t.HarnessKillGraceSeconds = max(0, number(m, "harnessKillGraceSeconds", t.HarnessKillGraceSeconds))
	t.SocketName = str(m, "socketName", t.SocketName)
	t.SubmitDelayMs = max(0, int(number(m, "submitDelayMs", float64(t.SubmitDelayMs))))
	t.ReadySeconds = max(0, number(m, "readySeconds", t.ReadySeconds))
	if v := number(m, "submitSeconds", t.SubmitSeconds); v > 0 {
		t.SubmitSeconds = v
	}
	t.KeepSessionOnClose = boolean(m, "keepSessionOnClose", t.KeepSessionOnClose)
	t.KillHarnessOnClose = boolean(m, "killHarnessOnClose", t.KillHarnessOnClose)
}

// apply reads the service block: where it listens and how it
// authenticates, its limits, the web UI, the event stream and its log. An
// unknown auth keeps the default; an empty socket means the default one.
func (s *Service) apply(m map[string]any) {
	s.Enabled = boolean(m, "enabled", s.Enabled)
	s.Host = nonEmpty(m, "host", s.Host)
	s.Port = int(number(m, "port", float64(s.Port)))
	s.Exposed = boolean(m, "exposed", s.Exposed)
	s.AutoStart = boolean(m, "autoStart", s.AutoStart)
	s.MCPEnabled = boolean(mapping(m["mcp"]), "enabled", s.MCPEnabled)
	s.TokenEnv = str(m, "tokenEnv", s.TokenEnv)
	if p := str(m, "socket", ""); p != "" {
		s.Socket = p
	}
	if a := str(m, "auth", s.Auth); a == AuthNone || a == AuthToken {
		s.Auth = a
	}
	if hosts, ok := stringList(m["allowedHosts"]); ok {
		s.AllowedHosts = hosts
	}
	if n := int64(number(m, "maxBodyBytes", float64(s.MaxBodyBytes))); n >= 1 {
		s.MaxBodyBytes = n
	}
	s.WebEnabled = boolean(mapping(m["web"]), "enabled", s.WebEnabled)
	st := mapping(m["stream"])
	s.StreamEnabled = boolean(st, "enabled", s.StreamEnabled)
	s.StreamMaxSubscribers = max(1, int(number(st, "maxSubscribers", float64(s.StreamMaxSubscribers))))
	s.StreamKeepAliveSeconds = max(1, int(number(st, "keepAliveSeconds", float64(s.StreamKeepAliveSeconds))))
	s.Log.apply(mapping(m["log"]))
}

// apply reads service.log. A format or level it does not know keeps the
// default; rotation keeps at least a 1 MB file and never a negative count.
func (l *Log) apply(m map[string]any) {
	switch f := str(m, "format", l.Format); f {
	case "text", "json":
		l.Format = f
	}
	switch lv := str(m, "level", l.Level); lv {
	case "debug", "info", "warn", "error":
		l.Level = lv
	}
	l.MaxSizeMB = max(1, int(number(m, "maxSizeMB", float64(l.MaxSizeMB))))
	l.MaxFiles = max(0, int(number(m, "maxFiles", float64(l.MaxFiles))))
}

// apply reads the eventLog block; its bounds take only a positive value.
func (e *EventLog) apply(m map[string]any) {
	e.Enabled = boolean(m, "enabled", e.Enabled)
	e.Path = str(m, "path", e.Path)
	if n := int(number(m, "maxEvents", float64(e.MaxEvents))); n >= 1 {
		e.MaxEvents = n
	}
	if n := int64(number(m, "maxBytes", float64(e.MaxBytes))); n >= 1 {
		e.MaxBytes = n
	}
}

// apply reads channels.slack: the tokens, the channel, what is posted and
// who may answer, and how replies are read. An unknown verbosity keeps
// normal, as the original; an unknown read mode is off, never a reading
// one.
func (s *Slack) apply(m map[string]any) {
	s.Enabled = boolean(m, "enabled", s.Enabled)
	s.BotTokenEnv = nonEmpty(m, "botTokenEnv", s.BotTokenEnv)
	s.AppTokenEnv = nonEmpty(m, "appTokenEnv", s.AppTokenEnv)
	s.Channel = str(m, "channel", s.Channel)
	s.APIURL = str(m, "apiUrl", s.APIURL)
	if ev, ok := stringList(m["events"]); ok {
		s.Events = ev
	}
	switch v := str(m, "verbosity", s.Verbosity); v {
	case "quiet", "normal", "verbose":
		s.Verbosity = v
	} // unknown ⇒ normal, as the original
	if users, ok := stringList(m["authorizedUsers"]); ok {
		s.AuthorizedUsers = users
	}
	read := mapping(m["read"])
	switch mode := str(read, "mode", s.ReadMode); mode {
	case "poll", "socket", "off":
		s.ReadMode = mode
	default:
		s.ReadMode = "off" // unknown ⇒ off, never a reading mode
	}
	s.IntervalSeconds = max(5, int(number(read, "intervalSeconds", float64(s.IntervalSeconds))))
	s.RetrySeconds = max(1, int(number(m, "retrySeconds", float64(s.RetrySeconds))))
	if v, ok := m["postReplies"].(bool); ok {
		s.PostReplies = v
	}
}
