package main

import (
	"os"

	"github.com/yarn-am/yarn-am/contract"
)

// definesFromEnv returns the -D overrides that submit (for the AM) or the AM (for a launcher) put in
// contract.EnvDefines, followed by those of the command line, which win as a later -D does. It
// removes the variable from this process's environment: the driver and the worker did not get the
// overrides when they were on the command line, and do not now.
func definesFromEnv(flags []string) ([]string, error) {
	env, err := contract.DecodeDefines(os.Getenv(contract.EnvDefines))
	if err != nil {
		return nil, err
	}
	_ = os.Unsetenv(contract.EnvDefines)
	return append(env, flags...), nil
}
