package contract

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
)

// EnvDefines carries the -D key=value overrides to the AM (set by the client) and to the launchers
// (set by the AM), instead of their command lines: a command line is readable by every user of the
// node (ps, /proc/<pid>/cmdline), and -D values hold am.env and taskexecutor.env values and Flink keys
// such as s3.secret-key; a process's environment is readable by its own user alone. The value is
// EncodeDefines': base64 of a JSON list, so that neither the NodeManager's launch script (which puts
// an environment value in double quotes, where $ and ` would expand) nor a newline in a value changes
// it (TestDefinesTravelInTheEnvironment).
const EnvDefines = "YARN_AM_DEFINES"

// maxDefinesEnv bounds the variable DecodeDefines reads: a launch context's environment is the
// client's, but a bound keeps a damaged one from being decoded at any size.
const maxDefinesEnv = 4 << 20

// EncodeDefines is EnvDefines' value for defines; "" for none.
func EncodeDefines(defines []string) string {
	if len(defines) == 0 {
		return ""
	}
	b, _ := json.Marshal(defines) // a []string always marshals
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeDefines reads EnvDefines' value; "" is none.
func DecodeDefines(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > maxDefinesEnv {
		return nil, fmt.Errorf("%s holds %d bytes, more than %d", EnvDefines, len(v), maxDefinesEnv)
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64 (set by yarn-am submit and the AM): %w", EnvDefines, err)
	}
	var d []string
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s is not a list of key=value (set by yarn-am submit and the AM): %w", EnvDefines, err)
	}
	return d, nil
}

// TakeDefines returns the -D overrides that submit (for the AM) or the AM (for a launcher) put in
// EnvDefines, followed by flags, those of the command line, which win as a later -D does. It removes
// the variable from this process's environment: the driver and the worker did not get the overrides
// when they were on the command line, and do not now.
func TakeDefines(flags []string) ([]string, error) {
	env, err := DecodeDefines(os.Getenv(EnvDefines))
	if err != nil {
		return nil, err
	}
	_ = os.Unsetenv(EnvDefines)
	return append(env, flags...), nil
}
