package flink

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// This file puts the cluster's Hadoop on the JobManager's and TaskManagers' classpath, after Flink's
// own jars, as Flink's YARN mode does, so that Flink's Hadoop file system reaches hdfs:// with the
// container's delegation tokens (docs/flink.md#hdfs-checkpoints-and-savepoints).

// keyHadoopClasspath is the [flink] key that replaces the classpath derived from
// yarn.application.classpath.
const keyHadoopClasspath = "hadoop-classpath"

// keyYARNApplicationClasspath is YARN's key of the classpath its nodes give Java containers.
const keyYARNApplicationClasspath = "yarn.application.classpath"

// envHadoopClasspath carries the Hadoop classpath's entries, not yet expanded, from the AM to the
// JobManager and every TaskManager (encodeHadoopClasspath): each container expands them against its
// own environment, as the NodeManager's launch script would. Base64, so that YARN's launch script
// leaves the $VAR and * of the entries alone.
const envHadoopClasspath = "YARN_AM_FLINK_HADOOP_CLASSPATH"

// hadoopClasspath is the Hadoop classpath of a job before expansion, and where it came from.
type hadoopClasspath struct {
	From    string   `json:"from"`    // what the entries are, for the log line
	Entries []string `json:"entries"` // none: no Hadoop on the classpath
}

// encodeHadoopClasspath renders h for envHadoopClasspath.
func encodeHadoopClasspath(h hadoopClasspath) (string, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	if len(s) > maxDefines {
		return "", fmt.Errorf("the Hadoop classpath takes %d bytes encoded; at most %d", len(s), maxDefines)
	}
	return s, nil
}

// decodeHadoopClasspath reads envHadoopClasspath's value; "" is no Hadoop classpath.
func decodeHadoopClasspath(v string) (hadoopClasspath, error) {
	var h hadoopClasspath
	if v == "" {
		return hadoopClasspath{From: envHadoopClasspath + " unset"}, nil
	}
	if len(v) > maxDefines {
		return h, fmt.Errorf("%s is %d bytes; at most %d", envHadoopClasspath, len(v), maxDefines)
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	if err != nil {
		return h, fmt.Errorf("%s=%s: want the Hadoop classpath as the AM encodes it (EncodeHadoopClasspath): %w", envHadoopClasspath, text.Quote(v), err)
	}
	return h, nil
}

// hadoopClasspathOf is the job's Hadoop classpath, chosen in the AM: [flink] hadoop-classpath when
// the job file sets it, else yarn.application.classpath of the AM's site files (the client's,
// staged with the AM), else YARN's default. lookup reads the site files' key.
func hadoopClasspathOf(spec *flinkSpec, lookup func(key string) (string, bool, error)) hadoopClasspath {
	if spec.HadoopClasspathSet {
		from := "[flink] " + keyHadoopClasspath
		if len(spec.HadoopClasspath) == 0 {
			from += " (off)"
		}
		return hadoopClasspath{From: from, Entries: spec.HadoopClasspath}
	}
	v, ok, err := lookup(keyYARNApplicationClasspath)
	if err != nil || !ok || strings.TrimSpace(v) == "" {
		why := "unset in the site files"
		if err != nil {
			why = err.Error()
		}
		return hadoopClasspath{From: "YARN's default " + keyYARNApplicationClasspath + " (" + why + ")",
			Entries: flinkdist.DefaultYARNApplicationClasspath}
	}
	return hadoopClasspath{From: keyYARNApplicationClasspath, Entries: flinkdist.SplitYARNClasspath(v)}
}

// siteLookup reads a key of the AM's site files (HADOOP_CONF_DIR is the AM's working directory, where
// the client staged them). Hadoop's ${var} left unexpanded is kept as it is, as Hadoop keeps it.
func siteLookup(key string) (string, bool, error) {
	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return "", false, err
	}
	v, ok, _ := conf.Lookup(key)
	return v, ok, nil
}

// hadoopEnv is what StartAM adds to the driver's and the TaskExecutors' environment for Hadoop: the
// classpath's entries and, as Flink's YARN mode does, HADOOP_USER_NAME, the user Hadoop acts as
// without Kerberos.
func hadoopEnv(spec *flinkSpec, env map[string]string) error {
	enc, err := encodeHadoopClasspath(hadoopClasspathOf(spec, siteLookup))
	if err != nil {
		return err
	}
	env[envHadoopClasspath] = enc
	if u := os.Getenv(hadoop.EnvUserName); u != "" {
		env[hadoop.EnvUserName] = u
	}
	return nil
}

// containerHadoopClasspath expands the job's Hadoop classpath in this container and says in one
// line on out what it is and which entries were dropped (they do not exist on this node).
func containerHadoopClasspath(name string, getenv func(string) string, out io.Writer) ([]string, error) {
	h, err := decodeHadoopClasspath(getenv(envHadoopClasspath))
	if err != nil {
		return nil, err
	}
	cp, dropped := flinkdist.ExpandHadoopClasspath(h.Entries, getenv)
	line := fmt.Sprintf("yarn-am %s: Hadoop classpath from %s: %d entries", name, h.From, len(cp))
	if len(dropped) > 0 {
		line += "; dropped, not on this node: " + text.Cut(strings.Join(dropped, ", "), 2000)
	}
	fmt.Fprintln(out, line)
	return cp, nil
}

// readHadoopClasspath reads [flink] hadoop-classpath: a list of paths and globs, or one classpath
// string (":" separated, as `hadoop classpath` prints it). [] or "" turns the Hadoop classpath off.
func readHadoopClasspath(t *jobfile.Table, f *flinkSpec) {
	v, set := t.Value(keyHadoopClasspath)
	if !set {
		return
	}
	f.HadoopClasspathSet = true
	const want = `want a list of absolute paths, globs or $VAR/... entries (e.g. ["$HADOOP_CONF_DIR", "/opt/hadoop/share/hadoop/common/*"]), a classpath string as 'hadoop classpath' prints it, or [] for none`
	var entries []string
	switch x := v.(type) {
	case string:
		for _, e := range strings.Split(x, ":") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
	case []any:
		entries = t.Strings(keyHadoopClasspath)
	default:
		t.Problem("flink.%s = %s: %s", keyHadoopClasspath, jobfile.Show(v), want)
		return
	}
	for _, e := range entries {
		if why := badClasspathEntry(e); why != "" {
			t.Problem("flink.%s: entry %s %s; %s", keyHadoopClasspath, text.Quote(e), why, want)
			return
		}
	}
	f.HadoopClasspath = entries
}

// badClasspathEntry says what is wrong with one entry of [flink] hadoop-classpath ("" nothing).
func badClasspathEntry(e string) string {
	switch {
	case strings.TrimSpace(e) == "":
		return "is empty"
	case strings.ContainsAny(e, "\n\r\x00"):
		return "has a line break or NUL"
	case strings.Contains(e, ":"):
		return `holds ":", the classpath separator: give each entry on its own`
	case !strings.HasPrefix(e, "/") && !strings.HasPrefix(e, "$") && !strings.HasPrefix(e, "{{"):
		return "is relative: the containers' working directories differ"
	}
	return ""
}

// Flink's security keys that hadoopSecurityDefaults sets.
const (
	keyKeytab          = "security.kerberos.login.keytab"
	keyUseTicketCache  = "security.kerberos.login.use-ticket-cache"
	keyDelegationToken = "security.delegation.tokens.enabled"
)

// hadoopSecurityDefaults makes Flink use the container's delegation tokens (the token file at
// HADOOP_TOKEN_FILE_LOCATION, which Hadoop's UserGroupInformation reads by itself, and YARN renews)
// instead of logging in, as Flink's YARN mode does without a shipped keytab: no ticket cache of
// the node, and no delegation token manager, which would try to obtain tokens it has no login for.
// A job that configures a keytab, or sets either key, keeps its own settings.
func hadoopSecurityDefaults(conf *flinkdist.Config) {
	if v, ok := conf.Get(keyKeytab); ok && strings.TrimSpace(v) != "" {
		return
	}
	for _, k := range []string{keyUseTicketCache, keyDelegationToken} {
		if _, ok := conf.Get(k); !ok {
			conf.Set(k, "false")
		}
	}
}
