package flinkdist

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// DefaultYARNApplicationClasspath is yarn.application.classpath when the site files leave it unset:
// YARN's own default (yarn-default.xml, YarnConfiguration.DEFAULT_YARN_APPLICATION_CLASSPATH), the
// layout of a Hadoop install under the homes the NodeManager passes to its containers.
var DefaultYARNApplicationClasspath = []string{
	"$HADOOP_CONF_DIR",
	"$HADOOP_COMMON_HOME/share/hadoop/common/*",
	"$HADOOP_COMMON_HOME/share/hadoop/common/lib/*",
	"$HADOOP_HDFS_HOME/share/hadoop/hdfs/*",
	"$HADOOP_HDFS_HOME/share/hadoop/hdfs/lib/*",
	"$HADOOP_YARN_HOME/share/hadoop/yarn/*",
	"$HADOOP_YARN_HOME/share/hadoop/yarn/lib/*",
}

// SplitYARNClasspath splits a yarn.application.classpath value (comma separated, as Hadoop's
// getStrings reads it; spaces and line breaks around entries dropped) into its entries.
func SplitYARNClasspath(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// crossPlatformVar is YARN's {{VAR}} form of a variable (the cross-platform classpath), which the
// NodeManager expands like $VAR.
var crossPlatformVar = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// ExpandHadoopClasspath expands the Hadoop classpath's entries in the container, as the
// NodeManager's launch script would for a Java AM: $VAR, ${VAR} and {{VAR}} from getenv; an entry
// dir/* stays a Java classpath wildcard (the JVM adds the directory's jars); other globs (*, ?, [)
// are matched here. An entry whose variable is unset, whose directory or file does not exist, or
// whose glob matches nothing is dropped, with why, in dropped; duplicates are kept once, the
// first.
func ExpandHadoopClasspath(entries []string, getenv func(string) string) (cp, dropped []string) {
	seen := map[string]bool{}
	keep := func(e string) {
		if !seen[e] {
			seen[e] = true
			cp = append(cp, e)
		}
	}
	for _, raw := range entries {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		var unset []string
		e := os.Expand(crossPlatformVar.ReplaceAllString(raw, "$${$1}"), func(name string) string {
			v := getenv(name)
			if v == "" {
				unset = append(unset, "$"+name)
			}
			return v
		})
		switch {
		case len(unset) > 0:
			dropped = append(dropped, raw+" ("+strings.Join(unset, ", ")+" not set)")
		case strings.HasSuffix(e, "/*") && !hasGlob(strings.TrimSuffix(e, "/*")):
			if isDir(strings.TrimSuffix(e, "/*")) {
				keep(e)
			} else {
				dropped = append(dropped, raw+" (no directory "+strings.TrimSuffix(e, "/*")+")")
			}
		case hasGlob(e):
			matches, err := filepath.Glob(e)
			if err != nil || len(matches) == 0 {
				dropped = append(dropped, raw+" (matches nothing)")
				continue
			}
			sort.Strings(matches)
			for _, m := range matches {
				keep(m)
			}
		default:
			if _, err := os.Stat(e); err != nil {
				dropped = append(dropped, raw+" (no "+e+")")
				continue
			}
			keep(e)
		}
	}
	return cp, dropped
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
