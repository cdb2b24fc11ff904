package yarnrpc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeSite(t *testing.T, dir, name string, props map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		b.WriteString("  <property>\n    <name>" + k + "</name>\n    <value>" + v + "</value>\n  </property>\n")
	}
	b.WriteString("</configuration>\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644))
}

func TestConfigDefaults(t *testing.T) {
	c, err := LoadConfig(t.TempDir())
	require.NoError(t, err)
	addrs, err := c.RMAddresses(RMClient)
	require.NoError(t, err)
	assert.Equal(t, []string{"0.0.0.0:8032"}, addrs)
	addrs, err = c.RMAddresses(RMScheduler)
	require.NoError(t, err)
	assert.Equal(t, []string{"0.0.0.0:8030"}, addrs)
	sec, err := c.SecurityEnabled()
	require.NoError(t, err)
	assert.False(t, sec)
	o, err := c.ConnDefaults()
	require.NoError(t, err)
	assert.Equal(t, "authentication", o.Protection)
	assert.Equal(t, 20*time.Second, o.ConnectTimeout)
	assert.Equal(t, DefaultMaxResponseLength, o.MaxResponseLength)
}

func TestConfigHostnameAndExpansion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("YARNAM_TEST_DOMAIN", "example.org")
	writeSite(t, dir, "core-site.xml", map[string]string{
		"hadoop.security.authentication": "kerberos",
		"cluster.domain":                 "${env.YARNAM_TEST_DOMAIN}",
		"hadoop.rpc.protection":          "privacy",
	})
	writeSite(t, dir, "yarn-site.xml", map[string]string{
		"yarn.resourcemanager.hostname": "rm.${cluster.domain}",
		"weird":                         "${does.not.exist}/x",
		"loop.a":                        "${loop.b}",
		"loop.b":                        "${loop.a}",
	})
	c, err := LoadConfig(dir)
	require.NoError(t, err)
	addrs, err := c.RMAddresses(RMClient)
	require.NoError(t, err)
	assert.Equal(t, []string{"rm.example.org:8032"}, addrs)
	v, _ := c.Get("weird")
	assert.Equal(t, "${does.not.exist}/x", v, "unresolvable references stay as written")
	_, ok := c.Get("loop.a")
	assert.True(t, ok, "a reference loop terminates")
	sec, err := c.SecurityEnabled()
	require.NoError(t, err)
	assert.True(t, sec)
	p, err := c.Protection()
	require.NoError(t, err)
	assert.Equal(t, "privacy", p)
	assert.Equal(t, filepath.Join(dir, "yarn-site.xml"), c.Source("yarn.resourcemanager.hostname"))
}

func TestConfigHA(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "yarn-site.xml", map[string]string{
		"yarn.resourcemanager.ha.enabled":            "true",
		"yarn.resourcemanager.ha.rm-ids":             " rm1, rm2 ,",
		"yarn.resourcemanager.address.rm1":           "master1:18032",
		"yarn.resourcemanager.hostname.rm1":          "master1",
		"yarn.resourcemanager.hostname.rm2":          "master2",
		"yarn.resourcemanager.scheduler.address.rm2": "${yarn.resourcemanager.hostname.rm2}:18030",
	})
	c, err := LoadConfig(dir)
	require.NoError(t, err)
	addrs, err := c.RMAddresses(RMClient)
	require.NoError(t, err)
	assert.Equal(t, []string{"master1:18032", "master2:8032"}, addrs)
	addrs, err = c.RMAddresses(RMScheduler)
	require.NoError(t, err)
	assert.Equal(t, []string{"master1:8030", "master2:18030"}, addrs)

	c.Set("yarn.resourcemanager.ha.rm-ids", "rm1,rm3")
	_, err = c.RMAddresses(RMClient)
	assert.ErrorContains(t, err, `RM id "rm3"`)
	assert.ErrorContains(t, err, "yarn.resourcemanager.hostname.rm3")

	c.Set("yarn.resourcemanager.ha.rm-ids", "")
	_, err = c.RMAddresses(RMClient)
	assert.ErrorContains(t, err, "yarn.resourcemanager.ha.rm-ids")
}

func TestConfigDirPrecedence(t *testing.T) {
	hadoop, yarn := t.TempDir(), t.TempDir()
	writeSite(t, hadoop, "core-site.xml", map[string]string{"fs.defaultFS": "hdfs://nn:8020"})
	writeSite(t, yarn, "core-site.xml", map[string]string{"fs.defaultFS": "hdfs://other:8020"})
	writeSite(t, yarn, "yarn-site.xml", map[string]string{"yarn.resourcemanager.hostname": "rm"})
	t.Setenv("HADOOP_CONF_DIR", hadoop)
	t.Setenv("YARN_CONF_DIR", yarn)
	c, err := LoadConfigFromEnv()
	require.NoError(t, err)
	assert.Equal(t, "hdfs://nn:8020", c.GetString("fs.defaultFS", ""), "HADOOP_CONF_DIR wins")
	assert.Equal(t, "rm", c.GetString("yarn.resourcemanager.hostname", ""), "YARN_CONF_DIR fills what it lacks")
	assert.Equal(t, hadoop, ConfigDirFromEnv())

	t.Setenv("HADOOP_CONF_DIR", "")
	t.Setenv("YARN_CONF_DIR", "")
	_, err = LoadConfigFromEnv()
	assert.ErrorContains(t, err, "HADOOP_CONF_DIR")
}

func TestConfigTypedGettersNameKeyAndValue(t *testing.T) {
	c := NewConfig(map[string]string{
		"b": "yes", "i": "12x", "d": "5 parsecs", "d2": "30s", "d3": "1500", "list": "a, b,,c",
		"yarn.resourcemanager.address":   "rm-without-port",
		"hadoop.security.authentication": "ldap",
		"hadoop.rpc.protection":          "integrity,sometimes",
	})
	_, err := c.GetBool("b", false)
	assert.EqualError(t, err, `yarnrpc: configuration b="yes" (from set): want true or false`)
	_, err = c.GetInt("i", 0)
	assert.ErrorContains(t, err, `i="12x"`)
	_, err = c.GetDuration("d", time.Millisecond, 0)
	assert.ErrorContains(t, err, `d="5 parsecs"`)
	d, err := c.GetDuration("d2", time.Millisecond, 0)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, d)
	d, err = c.GetDuration("d3", time.Millisecond, 0)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)
	assert.Equal(t, []string{"a", "b", "c"}, c.GetStrings("list"))
	_, err = c.RMAddresses(RMClient)
	assert.ErrorContains(t, err, `yarn.resourcemanager.address="rm-without-port"`)
	_, err = c.SecurityEnabled()
	assert.ErrorContains(t, err, "simple or kerberos")
	_, err = c.Protection()
	assert.ErrorContains(t, err, `hadoop.rpc.protection="integrity,sometimes"`)
}

func TestConfigMalformedFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte("<configuration><property>"), 0o644))
	_, err := LoadConfig(dir)
	assert.ErrorContains(t, err, filepath.Join(dir, "yarn-site.xml"))
}

// ${} expansion is bounded as in Hadoop's Configuration: a self-reference and a reference cycle are
// left as written with an error naming the key, and a value that references another eight times,
// nested eight deep (8⁸ copies if expanded fully), gives up at once instead of eating the memory.
func TestConfigExpansionBounds(t *testing.T) {
	eight := func(ref string) string { return strings.Repeat("${"+ref+"}", 8) }
	props := map[string]string{
		"self":    "x" + eight("self"),
		"cycle.a": "${cycle.b}/a",
		"cycle.b": "${cycle.a}/b",
		"grow.0":  "0123456789",
		"ok":      "${grow.0}-${unbound}-${grow.0}",
		"port":    "${self}",
	}
	for i := 1; i <= 8; i++ {
		props[fmt.Sprintf("grow.%d", i)] = eight(fmt.Sprintf("grow.%d", i-1))
	}
	c := NewConfig(props)

	start := time.Now()
	for _, tc := range []struct{ key, want string }{
		{"self", "${self} refers to itself"},
		{"cycle.a", "more than 20 nested ${} substitutions"},
		{"cycle.b", "more than 20 nested ${} substitutions"},
		{"grow.8", "more than 20 nested ${} substitutions"},
	} {
		v, ok, err := c.Lookup(tc.key)
		require.Error(t, err, tc.key)
		assert.True(t, ok)
		assert.Equal(t, props[tc.key], v, "%s is left as written", tc.key)
		assert.Contains(t, err.Error(), "configuration "+tc.key+"=")
		assert.Contains(t, err.Error(), tc.want)
		g, _ := c.Get(tc.key)
		assert.Equal(t, props[tc.key], g)
	}
	assert.Less(t, time.Since(start), 5*time.Second, "gives up within 5 s")

	v, _, err := c.Lookup("ok")
	require.NoError(t, err)
	assert.Equal(t, "0123456789-${unbound}-0123456789", v, "bound references expand, unbound ones stay")
	v, _, err = c.Lookup("grow.1")
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("0123456789", 8), v)

	_, err = c.GetInt("port", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "configuration port=")

	// The length cap: 20 substitutions of a 100 kB value would make 2 MB.
	big := NewConfig(map[string]string{"b": strings.Repeat("b", 100<<10), "x": strings.Repeat("${b}", 20)})
	_, _, err = big.Lookup("x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "longer than 1048576 bytes")
}

// TestConfigRefusesWhatIsNotABoundedFile: a site file that is a named pipe (reading it would block
// until someone writes), /dev/zero behind a symlink (it never ends) or larger than MaxSiteFileBytes is
// refused with an error naming the file, at once and without reading it whole.
func TestConfigRefusesWhatIsNotABoundedFile(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(t *testing.T, p string)
	}{
		{"named pipe", "named pipe", func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) }},
		{"dev zero", "a device", func(t *testing.T, p string) { require.NoError(t, os.Symlink("/dev/zero", p)) }},
		{"directory", "a directory", func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o755)) }},
		{"too large", "larger than 8 MiB", func(t *testing.T, p string) {
			f, err := os.Create(p)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(MaxSiteFileBytes+1))
			require.NoError(t, f.Close())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "yarn-site.xml")
			tc.make(t, p)
			done := make(chan error, 1)
			go func() { _, err := LoadConfig(dir); done <- err }()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Contains(t, err.Error(), p)
				assert.Contains(t, err.Error(), tc.want)
			case <-time.After(20 * time.Second):
				t.Fatalf("LoadConfig did not return for a %s", tc.name)
			}
		})
	}
}
