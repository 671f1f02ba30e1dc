package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// HookDelivery is one Claude Code hook payload as `the-loop hook` hands it
// on: to the service's hook route, the store, or the spool.
type HookDelivery struct {
	// Session is the ref the hook command was given (--session).
	Session string `json:"session"`
	// Payload is the hook's stdin, at most lifecycle.MaxHookPayload bytes.
	Payload []byte `json:"-"`
	// Truncated marks a payload cut at lifecycle.MaxHookPayload.
	Truncated bool `json:"truncated,omitempty"`
	// Parents is the hook command's parent chain, nearest first: the pids
	// that prove a clear comes from the session's own agent.
	Parents []int `json:"parents,omitempty"`
	// ID is the delivery's own id, made by the hook command once per
	// invocation and kept however the payload travels (POST, store, spool):
	// a session applies one id once, so a POST that timed out after the
	// service applied it and then went to the spool is not applied again.
	// Empty: no such guard (an older hook command).
	ID string `json:"id,omitempty"`
}

// HookSink applies hook payloads to the sessions they name (the service's
// POST /api/v1/hooks).
type HookSink interface {
	// ApplyHook applies d to the session it names in the store under
	// stateRoot; a payload for an unknown session or another conversation
	// is ignored (nil error).
	ApplyHook(ctx context.Context, stateRoot string, d HookDelivery) error
}

// The variables a gemini spawn's environment names its hooks' state root
// and session by: the one hook entry the-loop keeps in the Gemini CLI's
// user settings (`the-loop hook --from-env`) serves every session, and
// does nothing where they are unset (the operator's own runs of the CLI).
const (
	HookStateRootEnv = "THE_LOOP_HOOK_STATE_ROOT"
	HookSessionEnv   = "THE_LOOP_HOOK_SESSION"
)

// NewHookDeliveryID is a fresh delivery id (HookDelivery.ID): 128 random
// bits, hex — made once per hook invocation, by the hook program or the
// hook command, and kept through a hand-over.
func NewHookDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
