package flinkdist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// Home is a Flink distribution as yarn-am needs it (docs/flink.md#the-flink-distribution): lib/ with
// flink-dist, bin/bash-java-utils.jar, plugins/ (the GPU driver is loaded only from there), and
// optionally conf/.
type Home struct {
	Dir           string   // absolute
	DistJar       string   // lib/flink-dist-*.jar
	LibJars       []string // lib/*.jar in classpath order: sorted by name, flink-dist last
	BashJavaUtils string   // bin/bash-java-utils.jar
	PluginsDir    string   // plugins/
	ConfDir       string   // conf/ (may be missing: then the defaults flink-dist carries apply)
	Version       string   // from flink-dist's file name, e.g. 1.20.5
}

// OpenHome checks dir is a Flink home and returns it.
func OpenHome(dir string) (*Home, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("flink: home %s: %w", shown(dir), err)
	}
	h := &Home{Dir: abs, PluginsDir: filepath.Join(abs, "plugins"), ConfDir: filepath.Join(abs, "conf"),
		BashJavaUtils: filepath.Join(abs, "bin", "bash-java-utils.jar")}
	entries, err := os.ReadDir(filepath.Join(abs, "lib"))
	if err != nil {
		return nil, fmt.Errorf("flink: home %s has no lib/ (want a Flink distribution: lib/flink-dist-*.jar, bin/bash-java-utils.jar, plugins/): %w", shown(abs), err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jar") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(abs, "lib", n)
		if strings.HasPrefix(n, "flink-dist") {
			if h.DistJar != "" {
				return nil, fmt.Errorf("flink: home %s has two flink-dist jars: %s and %s", shown(abs), filepath.Base(h.DistJar), n)
			}
			h.DistJar = p
			h.Version = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(n, "flink-dist"), "-"), ".jar")
			if i := strings.LastIndex(h.Version, "-"); i >= 0 && strings.HasPrefix(n, "flink-dist_") {
				h.Version = h.Version[i+1:]
			}
			continue
		}
		h.LibJars = append(h.LibJars, p)
	}
	if h.DistJar == "" {
		return nil, fmt.Errorf("flink: home %s: lib/ has no flink-dist-*.jar", shown(abs))
	}
	// Flink's scripts put flink-dist at the end of the classpath, after the other lib/ jars.
	h.LibJars = append(h.LibJars, h.DistJar)
	if _, err := os.Stat(h.BashJavaUtils); err != nil {
		return nil, fmt.Errorf("flink: home %s: bin/bash-java-utils.jar (Flink's memory calculator): %w", shown(abs), err)
	}
	// The jars are opened (flink-dist's default configuration, packing, hashing): a named pipe in their
	// place would block the open, a device would never end (docs/running.md#limits-on-input-files).
	for _, jar := range append([]string{h.BashJavaUtils}, h.LibJars...) {
		st, err := os.Stat(jar)
		if err != nil {
			return nil, fmt.Errorf("flink: home %s: %w", shown(abs), err)
		}
		if kind := boundedread.NotRegular(st.Mode()); kind != "" {
			return nil, fmt.Errorf("flink: home %s: %s is %s, not a regular file; a Flink home holds jar files", shown(abs), jar, kind)
		}
	}
	if st, err := os.Stat(h.PluginsDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("flink: home %s has no plugins/ directory (the GPU driver loads only as a plugin)", shown(abs))
	}
	return h, nil
}

// Config reads the home's configuration as Flink would: conf/config.yaml, else conf/flink-conf.yaml
// (Flink 1.x; a Flink 2 home with only that file is a *LegacyConfigError, docs/flink.md#flink-2),
// else the default config.yaml inside flink-dist. It returns where it was read from.
func (h *Home) Config() (*Config, string, error) {
	load := loadConfDir
	if IsFlink2(h.Version) {
		load = func(dir string) (*Config, string, error) { return loadConfDirFlink2(dir, h.Version) }
	}
	c, src, err := load(h.ConfDir)
	if err == nil {
		return c, src, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	c, err = defaultConfig(h.DistJar)
	if err != nil {
		return nil, "", err
	}
	return c, h.DistJar + "!/" + configFile, nil
}

// maxLog4jBytes bounds the home's conf/log4j.properties (Flink's own is 3 KiB).
const maxLog4jBytes = 1 << 20

// ReadLog4jConfig returns the content of the home's conf/log4j.properties, read through the bounded
// reader (a named pipe or a device there is refused naming the file); ok is false when it has none.
func (h *Home) ReadLog4jConfig() (content string, ok bool, err error) {
	p := h.Log4jConfig()
	if p == "" {
		return "", false, nil
	}
	data, err := boundedread.ReadFile("log4j configuration", p, "a log4j.properties", maxLog4jBytes)
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

// Log4jConfig returns the home's conf/log4j.properties, or "" when it has none.
func (h *Home) Log4jConfig() string {
	p := filepath.Join(h.ConfDir, "log4j.properties")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// Classpath returns the process classpath: lib/ (flink-dist last), then the user's jars when given,
// as Flink's YARN mode puts the user jar on the JobManager's and TaskManagers' system classpath.
func (h *Home) Classpath(userJars []string) string {
	parts := append([]string(nil), h.LibJars[:len(h.LibJars)-1]...)
	parts = append(parts, userJars...)
	parts = append(parts, h.DistJar)
	return strings.Join(parts, string(os.PathListSeparator))
}

// IgnoredLegacyConfig returns the home's conf/flink-conf.yaml when the home is Flink 2 and has it
// beside conf/config.yaml: Flink 2 reads config.yaml alone, so what the legacy file sets is ignored
// (a warning of yarn-am check). "" otherwise.
func (h *Home) IgnoredLegacyConfig() string {
	if !IsFlink2(h.Version) {
		return ""
	}
	legacy := filepath.Join(h.ConfDir, legacyConfigFile)
	if _, err := os.Lstat(legacy); err != nil {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(h.ConfDir, configFile)); err != nil {
		return "" // refused by Config (LegacyConfigError), not ignored
	}
	return legacy
}
