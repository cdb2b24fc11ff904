package flink

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// [flink] hadoop-classpath takes a list or a classpath string, reaches the containers through the
// staged job file, and [] turns the Hadoop classpath off.
func TestHadoopClasspathKey(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string
	}{
		{`["$HADOOP_CONF_DIR", "/opt/hadoop/share/hadoop/common/*", "{{HADOOP_HDFS_HOME}}/x.jar"]`,
			[]string{"$HADOOP_CONF_DIR", "/opt/hadoop/share/hadoop/common/*", "{{HADOOP_HDFS_HOME}}/x.jar"}},
		{`"/etc/hadoop:/opt/hadoop/share/hadoop/common/lib/*::"`, []string{"/etc/hadoop", "/opt/hadoop/share/hadoop/common/lib/*"}},
		{`[]`, []string{}},
	} {
		p := writeJob(t, "[flink]\nhome = \"flink\"\nhadoop-classpath = "+tc.value+"\n")
		fakeFlinkHome(t, filepath.Dir(p))
		f, err := jobfile.Read(p)
		require.NoError(t, err, tc.value)
		j, err := f.StagedJob()
		require.NoError(t, err, tc.value)
		s := specOf(j)
		assert.True(t, s.HadoopClasspathSet, tc.value)
		assert.Equal(t, len(tc.want), len(s.HadoopClasspath), tc.value)
		if len(tc.want) > 0 {
			assert.Equal(t, tc.want, s.HadoopClasspath, tc.value)
		}
		h := hadoopClasspathOf(s, func(string) (string, bool, error) { t.Fatal("the key replaces the site files'"); return "", false, nil })
		assert.Equal(t, len(tc.want), len(h.Entries))
		assert.Contains(t, h.From, "[flink] hadoop-classpath")
	}
}

// Without the key: yarn.application.classpath of the site files, else YARN's default.
func TestHadoopClasspathFromTheSiteFiles(t *testing.T) {
	s := &flinkSpec{}
	h := hadoopClasspathOf(s, func(k string) (string, bool, error) {
		require.Equal(t, keyYARNApplicationClasspath, k)
		return "/mini/conf,\n /mini/jars/a.jar ,/mini/jars/b.jar", true, nil
	})
	assert.Equal(t, hadoopClasspath{From: keyYARNApplicationClasspath, Entries: []string{"/mini/conf", "/mini/jars/a.jar", "/mini/jars/b.jar"}}, h)
	h = hadoopClasspathOf(s, func(string) (string, bool, error) { return "", false, nil })
	assert.Equal(t, flinkdist.DefaultYARNApplicationClasspath, h.Entries)
	assert.Contains(t, h.From, "YARN's default yarn.application.classpath (unset in the site files)")
	h = hadoopClasspathOf(s, func(string) (string, bool, error) { return "", false, errors.New("no HADOOP_CONF_DIR") })
	assert.Equal(t, flinkdist.DefaultYARNApplicationClasspath, h.Entries)
	assert.Contains(t, h.From, "no HADOOP_CONF_DIR")
}

// The entries cross YARN's launch script untouched ($, *, quotes), and each container expands them
// and says in one line what it got and what it dropped.
func TestHadoopClasspathReachesTheContainer(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "common"), 0o755))
	in := hadoopClasspath{From: keyYARNApplicationClasspath, Entries: []string{"$H/common/*", "$NOPE/x", `/it's "quoted"`}}
	enc, err := encodeHadoopClasspath(in)
	require.NoError(t, err)
	assert.NotContains(t, enc, "$")
	env := map[string]string{envHadoopClasspath: enc, "H": dir}
	var out bytes.Buffer
	cp, err := containerHadoopClasspath("flink-taskmanager", func(k string) string { return env[k] }, &out)
	require.NoError(t, err)
	assert.Equal(t, []string{dir + "/common/*"}, cp)
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), out.String())
	assert.Contains(t, out.String(), "yarn-am flink-taskmanager: Hadoop classpath from yarn.application.classpath: 1 entries; dropped, not on this node: $NOPE/x ($NOPE not set), /it's \"quoted\" (no /it's \"quoted\")")

	env[envHadoopClasspath] = "not base64!"
	_, err = containerHadoopClasspath("flink-taskmanager", func(k string) string { return env[k] }, &out)
	assert.ErrorContains(t, err, envHadoopClasspath+"=")
	delete(env, envHadoopClasspath)
	cp, err = containerHadoopClasspath("flink-taskmanager", func(k string) string { return env[k] }, &out)
	require.NoError(t, err)
	assert.Empty(t, cp)
}

// Flink's processes use the container's delegation tokens, not a login, unless the job configures
// a keytab or the keys itself.
func TestHadoopSecurityDefaults(t *testing.T) {
	c := flinkdist.NewConfig()
	hadoopSecurityDefaults(c)
	for _, k := range []string{keyUseTicketCache, keyDelegationToken} {
		v, _ := c.Get(k)
		assert.Equal(t, "false", v, k)
	}
	c = flinkdist.NewConfig()
	c.Set(keyDelegationToken, "true")
	hadoopSecurityDefaults(c)
	v, _ := c.Get(keyDelegationToken)
	assert.Equal(t, "true", v)
	c = flinkdist.NewConfig()
	c.Set(keyKeytab, "/k/user.keytab")
	hadoopSecurityDefaults(c)
	_, set := c.Get(keyUseTicketCache)
	assert.False(t, set, "a job with a keytab keeps Flink's own login")
}

// The JobManager names the jar's Main-Class: the Hadoop classpath holds other jars with one.
func TestJarMainClass(t *testing.T) {
	dir := t.TempDir()
	write := func(name, manifest string) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		require.NoError(t, err)
		zw := zip.NewWriter(f)
		if manifest != "" {
			w, err := zw.Create("META-INF/MANIFEST.MF")
			require.NoError(t, err)
			_, _ = w.Write([]byte(manifest))
		}
		require.NoError(t, zw.Close())
		require.NoError(t, f.Close())
		return p
	}
	m, err := jarMainClass(write("a.jar", "Manifest-Version: 1.0\r\nMain-Class: yarnam.flinkjob.Job\r\n\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "yarnam.flinkjob.Job", m)
	m, err = jarMainClass(write("b.jar", ""))
	require.NoError(t, err)
	assert.Empty(t, m)
	_, err = jarMainClass(filepath.Join(dir, "none.jar"))
	assert.Error(t, err)
}
