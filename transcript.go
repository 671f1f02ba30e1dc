package loop

import "time"

// Transcript roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// TranscriptEntry is one prompt or one answer of an agent's conversation,
// as `standing transcript`, REST, MCP and the SDK show it.
type TranscriptEntry struct {
	Role  string      `json:"role"` // RoleUser or RoleAssistant
	Text  string      `json:"text"`
	At    time.Time   `json:"at"`
	Usage *TokenUsage `json:"usage,omitempty"` // an answer's tokens, when the transcript has them
}

// TokenUsage counts tokens: one answer's, or (summed) a conversation's.
type TokenUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Add returns the sum of u and v.
func (u TokenUsage) Add(v TokenUsage) TokenUsage {
	return TokenUsage{Input: u.Input + v.Input, Output: u.Output + v.Output,
		CacheRead: u.CacheRead + v.CacheRead, CacheWrite: u.CacheWrite + v.CacheWrite}
}
