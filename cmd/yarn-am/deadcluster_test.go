package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeadClusterIsNamedInSeconds: every client command against a ResourceManager address where
// nothing listens, where an HTTP server answers, or where a server accepts and never answers ends with
// a message naming the address and where it came from, within a bound (generous for a busy machine:
// the refused and HTTP cases take well under a second, the silent one its --timeout).
func TestDeadClusterIsNamedInSeconds(t *testing.T) {
	refused := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	web := func(t *testing.T) string {
		s := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	silent := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		return l.Addr().String()
	}
	job := writeTestJob(t, gpuJob)
	for _, tc := range []struct {
		name   string
		server func(*testing.T) string
		within time.Duration
		want   []string
	}{
		{"refused", refused, 10 * time.Second, []string{"cannot reach the ResourceManager at", "connection refused", "yarn.resourcemanager.address in"}},
		{"an HTTP server", web, 10 * time.Second, []string{"this is an HTTP server", "web port (8088) instead of the RPC port (8032)"}},
		{"silent", silent, 12 * time.Second, []string{"no response", "127.0.0.1:"}},
	} {
		for _, args := range [][]string{
			{"cluster", "--timeout", "6s"},
			{"list", "--timeout", "6s"},
			{"status", "application_1700000000000_0001", "--timeout", "6s"},
			{"kill", "application_1700000000000_0001", "--timeout", "6s"},
			{"check", job, "--timeout", "6s"},
		} {
			t.Run(tc.name+"/"+args[0], func(t *testing.T) {
				addr := tc.server(t)
				dir := t.TempDir()
				site := fmt.Sprintf(`<configuration><property><name>yarn.resourcemanager.address</name><value>%s</value></property></configuration>`, addr)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(site), 0o644))
				t.Setenv("HADOOP_CONF_DIR", dir)
				t.Setenv("YARN_CONF_DIR", "")
				start := time.Now()
				_, errs, code := runCmd(args...)
				took := time.Since(start)
				assert.NotEqual(t, 0, code)
				assert.Less(t, took, tc.within, "gives up within %s", tc.within)
				for _, w := range tc.want {
					assert.Contains(t, errs, w)
				}
				assert.Contains(t, errs, addr, "names the address")
			})
		}
	}
}
