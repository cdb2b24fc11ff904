package flinkdist

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file is what Flink 2 changed in what a Flink home reads (docs/flink.md#flink-2): the
// configuration file (conf/config.yaml only; the legacy flink-conf.yaml is no longer read) and the
// configuration keys Flink 2 no longer declares (removedkeys.go).

// majorVersion is the major version of a Flink version as OpenHome reads it from flink-dist's name ("2.3.0"
// is 2); ok is false when it is not one.
func majorVersion(flinkVersion string) (int, bool) {
	first, _, _ := strings.Cut(strings.TrimSpace(flinkVersion), ".")
	n, err := strconv.Atoi(first)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// IsFlink2 reports whether the Flink version is 2 or later. A version that cannot be read is not:
// such a home keeps the 1.x rules, which refuse nothing 2.x accepts.
func IsFlink2(flinkVersion string) bool {
	n, ok := majorVersion(flinkVersion)
	return ok && n >= 2
}

// migrateConfigScript is the script of Flink's binary distribution that writes conf/config.yaml from
// a legacy conf/flink-conf.yaml.
const migrateConfigScript = "bin/migrate-config-file.sh"

// LegacyConfigError is a Flink 2 home whose conf/ has only the legacy flink-conf.yaml, which Flink 2
// no longer reads: its processes would start on flink-dist's defaults, the file's keys ignored.
type LegacyConfigError struct {
	Path    string // the conf/flink-conf.yaml
	Version string // the home's Flink version
}

func (e *LegacyConfigError) Error() string {
	return fmt.Sprintf("flink: the home's %s is the legacy configuration file, which Flink %s no longer reads: Flink 2 reads only conf/%s (standard YAML), so its keys would be ignored. "+
		"Convert it with the %s of Flink's binary distribution (it writes conf/%s from conf/%s) or write conf/%s yourself, then remove %s (docs/flink.md#flink-2)",
		e.Path, e.Version, configFile, migrateConfigScript, configFile, legacyConfigFile, configFile, legacyConfigFile)
}

// loadConfDirFlink2 reads a Flink 2 conf directory: config.yaml only. A conf/ with only
// flink-conf.yaml is a *LegacyConfigError; one with neither is os.ErrNotExist, as loadConfDir's.
func loadConfDirFlink2(dir, version string) (*Config, string, error) {
	path := filepath.Join(dir, configFile)
	if _, err := os.Lstat(path); err == nil {
		c, src, err := loadConfDir(dir) // config.yaml first: the same reader
		return c, src, err
	}
	legacy := filepath.Join(dir, legacyConfigFile)
	if _, err := os.Lstat(legacy); err == nil {
		return nil, "", &LegacyConfigError{Path: legacy, Version: version}
	}
	return nil, "", fmt.Errorf("flink: %s has no %s: %w", dir, configFile, os.ErrNotExist)
}
