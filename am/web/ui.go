package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// This file serves the status page: ui/index.html at "/" and its script and style under "/ui/",
// embedded in the binary (no build step, nothing from a CDN). The page reads the JSON API with
// relative URLs, so it works at the tracking URL and through the RM's proxy
// (RM_WEB/proxy/<appId>/) alike, and never sees the application secret.

//go:embed ui/index.html ui/app.js ui/style.css
var uiFiles embed.FS

// UIHandler serves the page at "/" and its assets at "/ui/...".
func UIHandler() http.Handler {
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil { // cannot happen: the directory is embedded
		return http.NotFoundHandler()
	}
	assets := http.StripPrefix("/ui/", http.FileServer(http.FS(sub)))
	index, _ := uiFiles.ReadFile("ui/index.html")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(index)
	})
	mux.Handle("GET /ui/", assets)
	return mux
}
