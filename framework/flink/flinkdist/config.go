package flinkdist

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/flinkconf"
	"github.com/yarn-am/yarn-am/internal/text"
)

// Config is a flattened Flink configuration: dotted keys (jobmanager.rpc.address) to their values as
// text, in the order they were first set. Lists are held in Flink's own string form for list options,
// items joined by ";" (docs/flink.md#configuration).
type Config struct {
	keys []string
	vals map[string]string
}

// NewConfig returns an empty configuration.
func NewConfig() *Config { return &Config{vals: map[string]string{}} }

// Get returns the value of key and whether it is set.
func (c *Config) Get(key string) (string, bool) {
	v, ok := c.vals[key]
	return v, ok
}

// Set sets key to value, keeping the key's first position.
func (c *Config) Set(key, value string) {
	if _, ok := c.vals[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.vals[key] = value
}

// Delete removes key.
func (c *Config) Delete(key string) {
	if _, ok := c.vals[key]; !ok {
		return
	}
	delete(c.vals, key)
	for i, k := range c.keys {
		if k == key {
			c.keys = append(c.keys[:i], c.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in the order they were first set.
func (c *Config) Keys() []string { return append([]string(nil), c.keys...) }

// Clone returns an independent copy.
func (c *Config) Clone() *Config {
	n := NewConfig()
	for _, k := range c.keys {
		n.Set(k, c.vals[k])
	}
	return n
}

// Merge sets every key of layer over c (a later layer wins, as Flink's -D wins over the file).
func (c *Config) Merge(layer *Config) {
	for _, k := range layer.keys {
		c.Set(k, layer.vals[k])
	}
}

const (
	// maxConfigBytes bounds the other files this package reads whole (the launcher's info file,
	// readAssigned); a Flink configuration is bounded by flinkconf.MaxBytes.
	maxConfigBytes = 4 << 20
	// maxValueShown bounds a value echoed in an error message.
	maxValueShown = 60
)

// shown is a bounded prefix of a value for error messages.
func shown(v string) string {
	if len(v) > maxValueShown {
		return strconv.Quote(text.Cut(v, maxValueShown)) + "..."
	}
	return strconv.Quote(v)
}

// ApplyDefines sets each "key=value" of defines (the -D flags) over c.
func (c *Config) ApplyDefines(defines []string) error {
	for _, d := range defines {
		k, v, ok := strings.Cut(d, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("flink: -D %s: want key=value", shown(d))
		}
		c.Set(k, strings.TrimSpace(v))
	}
	return nil
}

// Config file names in a Flink conf directory. Flink 1.19+ reads config.yaml (standard YAML); the
// legacy flink-conf.yaml ("key: value" lines) is read when there is no config.yaml.
const (
	configFile       = flinkconf.YAMLName
	legacyConfigFile = flinkconf.LegacyName
)

// loadConfDir reads the configuration of a Flink conf directory as Flink would: config.yaml, else
// flink-conf.yaml. It returns the file it read; os.ErrNotExist when the directory has neither.
func loadConfDir(dir string) (*Config, string, error) {
	for _, name := range []string{configFile, legacyConfigFile} {
		path := filepath.Join(dir, name)
		// Lstat, not Stat: a dangling link is a broken conf/, not a missing file.
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		entries, err := flinkconf.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("flink: %w", err)
		}
		return fromEntries(entries), path, nil
	}
	return nil, "", fmt.Errorf("flink: %s has neither %s nor %s: %w", dir, configFile, legacyConfigFile, os.ErrNotExist)
}

// defaultConfig reads the config.yaml that flink-dist carries (the binary distribution's
// conf/config.yaml, with among others the JVM options Java 17 needs in env.java.opts.all).
func defaultConfig(distJar string) (*Config, error) {
	z, err := zip.OpenReader(distJar)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != configFile {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("flink: %s!/%s: %w", distJar, configFile, err)
		}
		defer r.Close()
		return parseYAML(r, distJar+"!/"+configFile)
	}
	return nil, fmt.Errorf("flink: %s carries no %s", distJar, configFile)
}

// parseLegacy reads a legacy flink-conf.yaml line by line as Flink does (internal/flinkconf, the reader
// every Flink configuration goes through): "key: value" lines, '#' comments; a line it cannot read or
// a key set twice is an error naming the file and line. name names r in errors.
func parseLegacy(r io.Reader, name string) (*Config, error) {
	return parseWith(r, name, flinkconf.ParseLegacy)
}

// parseYAML reads a Flink config.yaml as Flink 1.19+ does (internal/flinkconf): standard YAML, nested
// mappings flattened to dotted keys, lists of scalars in Flink's list form "a;b", anchors, aliases and
// merge keys followed as Flink's YAML reader follows them, within bounds. What cannot be read so is an
// error naming the file and line, never a wrong value.
func parseYAML(r io.Reader, name string) (*Config, error) {
	return parseWith(r, name, flinkconf.ParseYAML)
}

func parseWith(r io.Reader, name string, parse func(string, []byte) ([]flinkconf.Entry, error)) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, flinkconf.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("flink: reading %s: %w", name, err)
	}
	if len(data) > flinkconf.MaxBytes {
		return nil, fmt.Errorf("flink: %s is larger than %d bytes, the most yarn-am reads of a Flink configuration", name, flinkconf.MaxBytes)
	}
	entries, err := parse(name, data)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	return fromEntries(entries), nil
}

func fromEntries(entries []flinkconf.Entry) *Config {
	c := NewConfig()
	for _, e := range entries {
		c.Set(e.Key, e.Value)
	}
	return c
}

// WriteYAML writes c as a config.yaml Flink reads back to the same keys and values: one flat
// "key: 'value'" line a key (Flink flattens dotted keys and nested mappings alike), values single
// quoted so no value is read as YAML syntax. Keys are sorted, so equal configurations give equal files.
func (c *Config) WriteYAML(w io.Writer) error {
	keys := c.Keys()
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Written by yarn-am (docs/flink.md#configuration): the Flink home's configuration, then the job file's Flink keys, then -D.")
	for _, k := range keys {
		v := c.vals[k]
		if strings.ContainsAny(k, "\n\r") || strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("flink: key %s: a key or value with a line break cannot be written", shown(k))
		}
		fmt.Fprintf(bw, "%s: %s\n", yamlQuote(k), yamlQuote(v))
	}
	return bw.Flush()
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// WriteConfDir writes c as dir/config.yaml (creating dir), readable by its owner only, replacing the
// file atomically (atomicfile).
func (c *Config) WriteConfDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	var yamlErr error // WriteYAML's own error, returned as it is
	err := atomicfile.WriteFunc(filepath.Join(dir, configFile), 0o600, func(w io.Writer) error {
		yamlErr = c.WriteYAML(w)
		return yamlErr
	})
	if err != nil && err != yamlErr {
		return fmt.Errorf("flink: %w", err)
	}
	return err
}
