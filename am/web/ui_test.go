package web

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUIServesPageWithRelativeURLsOnly(t *testing.T) {
	srv := httptest.NewServer(UIHandler())
	defer srv.Close()
	for path, want := range map[string]string{"/": "text/html", "/ui/app.js": "javascript", "/ui/style.css": "text/css"} {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err, path)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, path)
		assert.Contains(t, resp.Header.Get("Content-Type"), want, path)
		text := string(body)
		// Behind the RM's proxy the page lives at /proxy/<appId>/: an absolute path would escape it.
		for _, bad := range []string{`href="/`, `src="/`, `fetch("/`, `"/api/`, "http://", "https://", "Bearer", "secret\""} {
			assert.NotContains(t, text, bad, "%s must not contain %q", path, bad)
		}
	}
	resp, err := srv.Client().Get(srv.URL + "/ui/nothing.js")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode)
}

// The page runs under a Content-Security-Policy without 'unsafe-inline': no inline script, event
// handler or style attribute in the HTML, and the script neither parses HTML nor writes styles.
func TestUIPageNeedsNoInlineScriptOrStyle(t *testing.T) {
	srv := httptest.NewServer(UIHandler())
	defer srv.Close()
	get := func(path string) string {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, 200, resp.StatusCode, path)
		return string(b)
	}
	page := get("/")
	assert.NotRegexp(t, regexp.MustCompile(`(?i)\sstyle\s*=`), page, "no style attribute")
	assert.NotRegexp(t, regexp.MustCompile(`(?i)\son[a-z]+\s*=`), page, "no inline event handler")
	assert.NotRegexp(t, regexp.MustCompile(`(?i)<style`), page, "no inline style element")
	assert.NotContains(t, page, "javascript:")
	for _, m := range regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		assert.Contains(t, m[1], `src="ui/`, "every script is a file of the page")
		assert.Empty(t, strings.TrimSpace(m[2]), "no inline script")
	}
	for _, id := range []string{`id="gpumap"`, `id="timeline"`} {
		assert.Contains(t, page, id)
	}
	js := get("/ui/app.js")
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(", ".style", `"style"`, "cssText"} {
		assert.NotContains(t, js, bad, "app.js must not use %s", bad)
	}
}
