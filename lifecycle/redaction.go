package lifecycle

import (
	"fmt"

	loop "github.com/the-loop-dev/the-loop"
	"github.com/the-loop-dev/the-loop/redact"
	"github.com/the-loop-dev/the-loop/store"
)

// Redaction of the event log: every event this service builds (s.event)
// has its text fields redacted by the service's Redactor — the token
// file's value, the *TokenEnv values, the agent credentials it issued or
// found recorded, and the credential shapes — before it is written.

// redactFields returns fields with every text value redacted: a string, a
// []string, an error or a fmt.Stringer (the last two as their text).
// Numbers, booleans and the rest are kept as they are.
func redactFields(r *redact.Redactor, fields []loop.Field) []loop.Field {
	out := fields
	for i, f := range fields {
		var v any
		switch x := f.Value.(type) {
		case string:
			if red := r.String(x); red != x {
				v = red
			}
		case []string:
			v = r.Strings(x)
		case error:
			v = r.String(x.Error())
		case fmt.Stringer:
			if s, red := x.String(), r.String(x.String()); red != s {
				v = red
			}
		}
		if v == nil {
			continue
		}
		if &out[0] == &fields[0] {
			out = append([]loop.Field(nil), fields...) // the caller's slice stays as it was
		}
		out[i] = loop.F(f.Key, v)
	}
	return out
}

// RememberCredentials tells the Redactor every agent credential hash the
// records hold (a service started after its sessions were spawned knows
// their credentials only from there). Nothing to do without a Redactor.
func (s *Service) RememberCredentials() error {
	if s.Redactor == nil || s.DB == nil {
		return nil
	}
	return s.DB.View(func(tx *store.Tx) error {
		recs, err := tx.ListStanding()
		if err != nil {
			return err
		}
		for _, r := range recs {
			s.Redactor.AddCredential(r.AgentTokenHash)
		}
		items, err := tx.ListWorkItems()
		if err != nil {
			return err
		}
		for _, r := range items {
			s.Redactor.AddCredential(r.AgentTokenHash)
		}
		return nil
	})
}
