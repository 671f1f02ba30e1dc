package loop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Approvals (decisions D35): a permission dialog of a standing session's
// agent, asked through Claude Code's PermissionRequest hook, is decided by
// the hook's own answer — never by keys into the dialog. The hook program
// (`the-loop-hook … --await-decision`) holds its request open at the
// service until a decision, a key at the terminal (the CLI SIGTERMs the
// hook), the session's stop or the wait's end; the record of each request
// lives in the store's approvals bucket.

// Statuses of an approval.
const (
	ApprovalPending = "pending" // its hook waits for a decision
	ApprovalAllowed = "allowed" // decided allow: the tool ran
	ApprovalDenied  = "denied"  // decided deny: the model got the message
	// ApprovalAtTerminal: the hook was ended first (the CLI SIGTERMs it
	// when a key answers the dialog).
	ApprovalAtTerminal = "answered-at-terminal"
	// ApprovalExpired: the wait ended undecided; the hook answered nothing
	// and the dialog is the terminal's (nothing is allowed by a timeout).
	ApprovalExpired = "expired"
	// ApprovalWithdrawn: the session stopped, its turn ended or the
	// service that held the request went away before a decision.
	ApprovalWithdrawn = "withdrawn"
)

// Decisions an approval takes.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// DefaultApprovalWait is standingSessions.approvals.waitSeconds' default:
// how long a PermissionRequest hook waits for a decision (the CLI's own
// default hook timeout, measured on 2.1.332, is 600 s).
const DefaultApprovalWait = 600 * time.Second

// ApprovalHookSlack is how much longer than the wait the CLI is told to
// let the hook run (its settings timeout), so the hook answers before the
// CLI ends it.
const ApprovalHookSlack = 10 * time.Second

// MaxDenyMessage is the longest deny message a decision may carry, in
// bytes.
const MaxDenyMessage = 4 << 10

// MaxApprovalInput is the longest tool input an approval keeps, in bytes
// (a larger one is cut and marked; it can be decided from the CLI, REST
// and MCP, which show what is kept).
const MaxApprovalInput = 64 << 10

// Approval is one permission request of a standing session's agent: its
// record in the store and its row in `standing approvals`.
type Approval struct {
	// ID names it to the deciders: short hex, unique in the store.
	ID string `json:"id"`
	// Session is the standing session's name.
	Session string `json:"session"`
	// Tool is the tool the agent asks to use (tool_name).
	Tool string `json:"tool"`
	// Input is the tool's input as the hook payload carried it
	// (tool_input), cut at MaxApprovalInput (InputTruncated).
	Input          json.RawMessage `json:"input"`
	InputTruncated bool            `json:"inputTruncated,omitempty"`
	// InputHash is the hex SHA-256 of the whole tool_input: a decision
	// binds to the request of this session, prompt and input.
	InputHash string `json:"inputHash"`
	// Cwd is the agent's working directory.
	Cwd string `json:"cwd,omitempty"`
	// PromptID is the turn's prompt id.
	PromptID string `json:"promptId,omitempty"`
	// ConversationID is the agent's conversation (session_id).
	ConversationID string `json:"conversationId,omitempty"`
	// RequestedAt is when the hook asked (RecordTimeFormat).
	RequestedAt string `json:"requestedAt"`
	// Status is one of the Approval* statuses.
	Status string `json:"status"`
	// DecidedAt is when it left pending (RecordTimeFormat).
	DecidedAt string `json:"decidedAt,omitempty"`
	// By is who decided: "operator", "slack:<member>", "standing:<agent>",
	// "rule:<n>" or "terminal"; empty for expired and withdrawn.
	By string `json:"by,omitempty"`
	// Message is a deny's message as the decider wrote it.
	Message string `json:"message,omitempty"`
}

// ApprovalDecision is a decider's answer to one approval (POST
// /api/v1/approvals/{id}).
type ApprovalDecision struct {
	// Decision is DecisionAllow or DecisionDeny.
	Decision string `json:"decision"`
	// Message is what the model reads of a deny (at most MaxDenyMessage
	// bytes), framed with who denied.
	Message string `json:"message,omitempty"`
	// Session, when set, is the session the decider means: an approval of
	// another session is refused (ECONFLICT).
	Session string `json:"session,omitempty"`
}

// ApprovalService lists and decides approvals (the service's
// lifecycle.Approvals; the SDK over REST).
type ApprovalService interface {
	// Approvals lists the approvals of session ("": every session's),
	// pending first, then the newest. EINVALID for a name that is not
	// one.
	Approvals(ctx context.Context, session string) ([]Approval, error)
	// Decide decides the pending approval id as by. ENOTFOUND for an
	// unknown id; ECONFLICT for one decided, expired or withdrawn, or of
	// another session than d.Session; EINVALID for a decision that is not
	// allow or deny, or a message over MaxDenyMessage.
	Decide(ctx context.Context, id string, d ApprovalDecision, by string) (Approval, error)
}

// ApprovalAnswer is what a waiting PermissionRequest hook is told: a
// behavior (DecisionAllow, DecisionDeny, or "" for none — the dialog stays
// the terminal's) and, for a deny, the message the model reads.
type ApprovalAnswer struct {
	ID       string `json:"id,omitempty"`
	Behavior string `json:"behavior,omitempty"`
	Message  string `json:"message,omitempty"`
}

// HashToolInput is the hex SHA-256 of a tool input, compacted first so
// that whitespace does not tell two inputs apart.
func HashToolInput(input json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, input) == nil {
		input = b.Bytes()
	}
	sum := sha256.Sum256(input)
	return hex.EncodeToString(sum[:])
}

// PermissionRequestAnswer is the JSON line a PermissionRequest hook prints
// for a: allow, or deny with its message; nil for no behavior (the hook
// prints nothing and the dialog stays).
func PermissionRequestAnswer(a ApprovalAnswer) []byte {
	type decision struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message,omitempty"`
	}
	if a.Behavior != DecisionAllow && a.Behavior != DecisionDeny {
		return nil
	}
	d := decision{Behavior: a.Behavior}
	if a.Behavior == DecisionDeny {
		d.Message = a.Message
	}
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PermissionRequest", "decision": d}})
	return out
}

// FrameDeny is what the model reads as the tool's error when a decider
// denies its permission request: who denied it, then the decider's
// message between two lines holding nonce, fresh for each deny, so their
// text cannot close the fence (as a peer's say is fenced); with no
// message, that no reason was given.
func FrameDeny(by, message, nonce string) string {
	if strings.TrimSpace(message) == "" {
		return fmt.Sprintf("Denied by %s through the-loop; no reason was given.", by)
	}
	return fmt.Sprintf("Denied by %s through the-loop — their message is between the two lines holding %s:\n\n"+
		"--- begin message from %s (%s) ---\n%s\n--- end %s ---", by, nonce, by, nonce, strings.TrimRight(message, "\n"), nonce)
}

// DenyNonce is a fresh nonce that message does not hold: 64 random bits,
// hex.
func DenyNonce(message string) string {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		if n := hex.EncodeToString(b[:]); !strings.Contains(message, n) {
			return n
		}
	}
}
