package config

import (
	"strings"
	"testing"
)

func TestServiceLog_DefaultsAndValues(t *testing.T) {
	if got, want := Default().Service.Log, (Log{Format: "text", Level: "info", MaxSizeMB: 10, MaxFiles: 5}); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	cfg := loadStanding(t, "service:\n  log: {format: json, level: debug, maxSizeMB: 3, maxFiles: 0}\n")
	if got, want := cfg.Service.Log, (Log{Format: "json", Level: "debug", MaxSizeMB: 3, MaxFiles: 0}); got != want {
		t.Errorf("read %+v, want %+v", got, want)
	}
}

// TestServiceLog_RefusalsNameTheKey: a bad format, level, size or count is
// refused naming its dotted key.
func TestServiceLog_RefusalsNameTheKey(t *testing.T) {
	for _, tt := range []struct{ yaml, key string }{
		{"service: {log: {format: xml}}", "service.log.format"},
		{"service: {log: {level: trace}}", "service.log.level"},
		{"service: {log: {maxSizeMB: 0}}", "service.log.maxSizeMB"},
		{"service: {log: {maxFiles: -1}}", "service.log.maxFiles"},
		{"service: {log: {rotate: true}}", "service.log"},
	} {
		problems := Validate([]byte(tt.yaml))
		if len(problems) != 1 || !strings.Contains(problems[0].Error(), tt.key) {
			t.Errorf("%s: problems %v, want one naming %s", tt.yaml, problems, tt.key)
		}
	}
}
