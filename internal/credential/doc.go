// Package credential holds what both the service and the CLI know of the
// agents' credentials and the-loop's secrets, none of it needing the
// store: the variables an agent's credential and the operator's token
// travel in (AgentTokenEnv, OperatorTokenEnv), the secret variables no
// agent inherits (SecretEnv) and an agent's whole environment (AgentEnv),
// a new credential and the hash a record keeps of it (New, Hash,
// HashEqual), and the agent's MCP server entry and where its config file
// lives (MCPServer, MCPConfigPath).
//
// Issuing a credential at a spawn (writing it into the record) and telling
// which session a credential is stay in lifecycle, which holds the store.
// It may import the standard library, the root package and config only.
package credential
