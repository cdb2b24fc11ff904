package cli

import "runtime/debug"

// Revision is the commit a binary was built from, as `yarn-am version` prints it: stamp (what the
// Makefile sets with -X) when given, else the toolchain's vcs.revision (with "+dirty" when
// vcs.modified), else "unknown".
func Revision(stamp string) string {
	if stamp != "" {
		return stamp
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
