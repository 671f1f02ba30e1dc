package harness

// Trust only for a project. Each CLI trusts a trusted folder's children
// too (Claude Code does), so the service pre-seeds trust only for a
// project of the user's own, never the root directory, the home directory
// or a directory another user owns or may write. Each adapter's SeedTrust
// reports which entries it added (loop.Harness), so they can be removed
// again (UnseedTrust) — never one the operator had before.
