// Package web is ragd's chat and audit page: static files embedded in the binary, served at /
// by package server. There is no build step and nothing is fetched from elsewhere: plain HTML,
// CSS and JavaScript that call the HTTP API of the server that served them.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Files are the page's files: index.html, app.js, style.css.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("web: the embedded files have no static directory: " + err.Error())
	}
	return sub
}

// Handler serves the page's files, with headers that keep the page to its own origin: its
// scripts, styles and API calls come from the server that served it.
func Handler() http.Handler {
	files := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
