// Package http is the-loop's control plane over HTTP: the echo REST service
// with its authored OpenAPI contract, the MCP tools, and the typed client the
// CLI and the Go SDK use.
package http
