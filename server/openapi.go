package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
)

//go:embed openapi.yaml
var openapiYAML []byte

// Spec returns the API's OpenAPI document, loaded and validated once.
var Spec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapiYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	if err := doc.Validate(openapi3.NewLoader().Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return doc, nil
})

var specJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := Spec()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

func (s *Server) openapi(c echo.Context) error {
	b, err := specJSON()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}
