package gpu

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yarn-am/yarn-am/internal/atomicfile"
)

//go:embed scripts/*.sh
var scriptFS embed.FS

// commonScript is the part shared by the vendor scripts; a vendor script sources it from its own
// directory under this name.
const commonScript = "gpu-discovery-common.sh"

// ScriptDir is the directory, relative to the working directory, where the built-in scripts are written
// out before they run (the container's working directory under YARN).
const ScriptDir = ".yarn-am"

// BuiltinScript returns the content of the built-in discovery script of vendor and of the common part it
// sources, for tests and for users who want to read or adapt them.
func BuiltinScript(v Vendor) (script, common []byte, err error) {
	script, err = scriptFS.ReadFile("scripts/" + v.scriptName())
	if err != nil {
		return nil, nil, fmt.Errorf("gpu: built-in script for vendor %q: %w", v, err)
	}
	common, err = scriptFS.ReadFile("scripts/" + commonScript)
	if err != nil {
		return nil, nil, fmt.Errorf("gpu: built-in script %s: %w", commonScript, err)
	}
	return script, common, nil
}

// WriteBuiltinScript writes the built-in script of vendor (as <vendor>-gpu-discovery.sh, mode 0755) and
// the common part it sources into dir, creating dir, and returns the script's path. Files are written to
// a temporary name and renamed, so a concurrent writer or reader never sees half a script.
func WriteBuiltinScript(dir string, v Vendor) (string, error) {
	script, common, err := BuiltinScript(v)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("gpu: cannot create the script directory %s: %w", dir, err)
	}
	if err := writeScript(filepath.Join(dir, commonScript), common); err != nil {
		return "", err
	}
	path := filepath.Join(dir, v.scriptName())
	if err := writeScript(path, script); err != nil {
		return "", err
	}
	return path, nil
}

// writeScript replaces path with an executable script in one step (atomicfile).
func writeScript(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o755); err != nil {
		return fmt.Errorf("gpu: cannot write %s: %w", path, err)
	}
	return nil
}
