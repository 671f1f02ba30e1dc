// Package http is the-loop's control plane over HTTP: the echo REST service
// with its authored OpenAPI contract, the MCP tools and the security
// boundary. Its handlers hold the root package's services
// (loop.StandingService, loop.WorkItemService, loop.EventLog, …) and
// nothing more concrete; the typed client of this API is package sdk.
package http
