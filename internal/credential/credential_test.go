package credential_test

import (
	"slices"
	"testing"

	"github.com/the-loop-dev/the-loop/config"
	"github.com/the-loop-dev/the-loop/internal/credential"
)

func TestSecretEnv_NamesEveryTokenEnvKey(t *testing.T) {
	cfg := config.Default()
	cfg.Service.TokenEnv = "OP_TOKEN"
	cfg.Raw = map[string]any{"integrations": map[string]any{"linear": map[string]any{"apiTokenEnv": "LINEAR_TOKEN"}},
		"webhooks": []any{map[string]any{"tokenEnv": "HOOK_TOKEN"}}}
	got := credential.SecretEnv(cfg)
	for _, want := range []string{"OP_TOKEN", "LINEAR_TOKEN", "HOOK_TOKEN", "THE_LOOP_SLACK_BOT_TOKEN", "THE_LOOP_SLACK_APP_TOKEN", credential.OperatorTokenEnv, credential.AgentTokenEnv} {
		if !slices.Contains(got, want) {
			t.Errorf("SecretEnv %q lacks %s", got, want)
		}
	}
	env := credential.AgentEnv([]string{"PATH=/bin", "OP_TOKEN=x", "THE_LOOP_AGENT_TOKEN=inherited", "LINEAR_TOKEN=y"}, cfg, "mine")
	if want := []string{"PATH=/bin", "THE_LOOP_AGENT_TOKEN=mine"}; !slices.Equal(env, want) {
		t.Fatalf("AgentEnv %q, want %q", env, want)
	}
}

func TestHash_IsTheTokensSHA256AndHashEqualWantsAStoredHash(t *testing.T) {
	token := credential.New()
	if len(token) != 64 || token == credential.New() {
		t.Fatalf("New gave %q (want 64 hex digits, fresh each call)", token)
	}
	h := credential.Hash(token)
	if len(h) != 64 || h == token || credential.Hash(token) != h {
		t.Fatalf("Hash(%q) = %q", token, h)
	}
	if !credential.HashEqual(h, credential.Hash(token)) || credential.HashEqual(h, credential.Hash(credential.New())) || credential.HashEqual("", credential.Hash("")) {
		t.Fatal("HashEqual: a stored hash matches its own token's hash only, an empty one none")
	}
}
