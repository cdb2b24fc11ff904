package chromium

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// The page draws its element only once the test lets the server answer its first request, and keeps
// a second request waiting for good, as a polling dashboard under load does (which stopped the virtual
// clock of a --virtual-time-budget load until an outer bound killed Chromium): WaitFor returns on the
// drawing, and the DOM and the screenshot are taken while the request still waits.
func TestBrowserWaitsForTheDOM(t *testing.T) {
	bin := Path()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: run testdata/ui/install-chromium.sh (make test does)")
		}
		t.Skip("chromium is not installed: run testdata/ui/install-chromium.sh")
	}
	release, stuck := make(chan struct{}), make(chan struct{})
	defer close(stuck)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html><body><p id="state">waiting</p><script>
fetch("data").then(function (r) { return r.text(); }).then(function (s) {
  var d = document.createElement("div"); d.id = "drawn"; d.textContent = s; document.body.appendChild(d);
  fetch("never");
});
</script></body></html>`))
	})
	mux.HandleFunc("GET /data", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write([]byte("drawn from the data"))
	})
	mux.HandleFunc("GET /never", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	b, err := Start(ctx, bin, t.TempDir(), 800, 600)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	dom, err := b.DOM(ctx)
	if err != nil || strings.Contains(dom, `id="drawn"`) {
		t.Fatalf("drawn before its data came: %v\n%s", err, dom)
	}
	waited := make(chan error, 1)
	go func() { waited <- b.WaitFor(ctx, `document.getElementById("drawn")`) }()
	close(release)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if dom, err = b.DOM(ctx); err != nil || !strings.Contains(dom, `<div id="drawn">drawn from the data</div>`) {
		t.Fatalf("the DOM after the wait: %v\n%s", err, dom)
	}
	png, err := b.Screenshot(ctx)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
}
