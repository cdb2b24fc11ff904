package yarnrpc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigFollowsXInclude: a site file's xi:include is followed as Hadoop's Configuration follows it
// (relative to the including file; the fallback when the file is missing; an error when it is missing
// without one), within bounds (depth, loops, named pipes), so that the ResourceManager's address does
// not silently fall back to 0.0.0.0:8032.
func TestConfigFollowsXInclude(t *testing.T) {
	const xi = `xmlns:xi="http://www.w3.org/2001/XInclude"`
	rmAddr := `<configuration><property><name>yarn.resourcemanager.address</name><value>rm.example:8032</value></property></configuration>`
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	rm := func(t *testing.T, c *Config) string {
		v, _ := c.Get("yarn.resourcemanager.address")
		return v
	}

	t.Run("relative include", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "shared/rm.xml", rmAddr)
		write(t, dir, "yarn-site.xml", `<configuration `+xi+`><xi:include href="shared/rm.xml"/></configuration>`)
		c, err := LoadConfig(dir)
		require.NoError(t, err)
		assert.Equal(t, "rm.example:8032", rm(t, c))
		assert.Equal(t, filepath.Join(dir, "shared/rm.xml"), c.Source("yarn.resourcemanager.address"))
	})
	t.Run("nested include relative to the including file", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a/b/rm.xml", rmAddr)
		write(t, dir, "a/mid.xml", `<configuration `+xi+`><xi:include href="b/rm.xml"/></configuration>`)
		write(t, dir, "yarn-site.xml", `<configuration `+xi+`><xi:include href="a/mid.xml"/></configuration>`)
		c, err := LoadConfig(dir)
		require.NoError(t, err)
		assert.Equal(t, "rm.example:8032", rm(t, c))
	})
	t.Run("missing include with a fallback", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "yarn-site.xml", `<configuration `+xi+`><xi:include href="nope.xml"><xi:fallback>
<property><name>yarn.resourcemanager.address</name><value>fb.example:8032</value></property></xi:fallback></xi:include></configuration>`)
		c, err := LoadConfig(dir)
		require.NoError(t, err)
		assert.Equal(t, "fb.example:8032", rm(t, c))
	})
	t.Run("present include skips its fallback", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "rm.xml", rmAddr)
		write(t, dir, "yarn-site.xml", `<configuration `+xi+`><xi:include href="rm.xml"><xi:fallback>
<property><name>yarn.resourcemanager.address</name><value>fb.example:8032</value></property></xi:fallback></xi:include></configuration>`)
		c, err := LoadConfig(dir)
		require.NoError(t, err)
		assert.Equal(t, "rm.example:8032", rm(t, c))
	})
	for _, tc := range []struct {
		name  string
		files map[string]string
		pipe  string
		want  []string
	}{
		{name: "missing include without a fallback", files: map[string]string{"yarn-site.xml": `<configuration ` + xi + `><xi:include href="nope.xml"/></configuration>`},
			want: []string{"yarn-site.xml", `"nope.xml"`, "does not exist", "xi:fallback"}},
		{name: "include loop", files: map[string]string{"yarn-site.xml": `<configuration ` + xi + `><xi:include href="yarn-site.xml"/></configuration>`},
			want: []string{"yarn-site.xml", "includes it again"}},
		{name: "include of an http URL", files: map[string]string{"yarn-site.xml": `<configuration ` + xi + `><xi:include href="http://example.com/rm.xml"/></configuration>`},
			want: []string{"yarn-site.xml", "http", "files only"}},
		{name: "include of a named pipe", pipe: "p.xml", files: map[string]string{"yarn-site.xml": `<configuration ` + xi + `><xi:include href="p.xml"/></configuration>`},
			want: []string{"p.xml", "named pipe", "not a regular file"}},
		{name: "include of /dev/zero", files: map[string]string{"yarn-site.xml": `<configuration ` + xi + `><xi:include href="/dev/zero"/></configuration>`},
			want: []string{"/dev/zero", "a device", "not a regular file"}},
		{name: "includes nested too deep", files: deepIncludes(xi, 12), want: []string{"nested more than 8 deep"}},
		{name: "includes fanning out", files: fanIncludes(xi, 6), want: []string{"more than 32 files"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, content := range tc.files {
				write(t, dir, n, content)
			}
			if tc.pipe != "" {
				require.NoError(t, syscall.Mkfifo(filepath.Join(dir, tc.pipe), 0o644))
			}
			_, err := LoadConfig(dir)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// deepIncludes is a chain yarn-site.xml → d1.xml → ... → dn.xml.
func deepIncludes(xi string, n int) map[string]string {
	m := map[string]string{}
	prev := "yarn-site.xml"
	for i := 1; i <= n; i++ {
		name := "d" + strings.Repeat("x", i) + ".xml"
		m[prev] = `<configuration ` + xi + `><xi:include href="` + name + `"/></configuration>`
		prev = name
	}
	m[prev] = `<configuration/>`
	return m
}

// fanIncludes is a chain of n files each including the next twice: 2^n reads without a bound.
func fanIncludes(xi string, n int) map[string]string {
	m := map[string]string{}
	prev := "yarn-site.xml"
	for i := 1; i <= n; i++ {
		name := "f" + strings.Repeat("x", i) + ".xml"
		m[prev] = `<configuration ` + xi + `><xi:include href="` + name + `"/><xi:include href="` + name + `"/></configuration>`
		prev = name
	}
	m[prev] = `<configuration/>`
	return m
}
