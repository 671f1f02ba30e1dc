package store

// Bucket names and fixed keys, in one place (containerd metadata's
// buckets.go). The tree they form is drawn at the top of store.go.
var (
	bucketMeta     = []byte("meta")      // schema version, event count
	bucketStanding = []byte("standing")  // standing-session name → JSON loop.StandingRecord
	bucketSessions = []byte("sessions")  // work-item slug → JSON loop.WorkItemRecord
	bucketEvents   = []byte("events")    // 8-byte big-endian sequence → JSON envelope
	bucketChannels = []byte("channels")  // per-channel state (Slack)
	bucketThreads  = []byte("threads")   // channels/threads: thread ts → JSON threadValue
	bucketCursors  = []byte("cursors")   // channels/cursors: thread ts → last processed ts
	bucketPending  = []byte("pending")   // channels/pending: 8-byte big-endian sequence → JSON pendingValue
	bucketApproval = []byte("approvals") // approval id → JSON loop.Approval (schema 3)
)

// Keys of the meta bucket.
var (
	keySchemaVersion = []byte("schemaVersion") // 8-byte big-endian uint64
	keyEventCount    = []byte("eventCount")    // 8-byte big-endian uint64: keys in events
	keyEventBytes    = []byte("eventBytes")    // two 8-byte big-endian uint64s: bytes of events' keys and values, events' sequence when counted
)
