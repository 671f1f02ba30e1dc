package http

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIYAML is the authored OpenAPI 3.1 contract of the REST API (original
// §8.3, decisions D4). It is written by hand, not generated: the routes are
// registered in code (Server.table) and the contract tests hold the two
// together.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPI returns the authored OpenAPI document (YAML), as
// GET /api/v1/openapi.yaml serves it.
func OpenAPI() []byte { return append([]byte(nil), openAPIYAML...) }

// MIMEApplicationYAML is the OpenAPI document's content type.
const MIMEApplicationYAML = "application/yaml"

// openAPI answers GET /api/v1/openapi.yaml with the contract as authored.
func (s *Server) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, MIMEApplicationYAML, openAPIYAML)
}
