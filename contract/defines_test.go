package contract

import (
	"os"
	"strings"
	"testing"
)

// TestTakeDefinesTakesThemFromTheEnvironment: the AM and the launchers take the -D overrides from
// EnvDefines (not their command lines, which every user of the node can read), the command line's
// after them, and leave the variable to neither the driver nor the worker.
func TestTakeDefinesTakesThemFromTheEnvironment(t *testing.T) {
	t.Setenv(EnvDefines, EncodeDefines([]string{"a=1", "s3.secret-key=x y"}))
	got, err := TakeDefines([]string{"a=2"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a=1|s3.secret-key=x y|a=2" {
		t.Errorf("got %q", got)
	}
	if _, ok := os.LookupEnv(EnvDefines); ok {
		t.Errorf("%s is still set for the driver and the worker", EnvDefines)
	}

	t.Setenv(EnvDefines, "not base64!")
	if _, err := TakeDefines(nil); err == nil || !strings.Contains(err.Error(), EnvDefines) {
		t.Errorf("a damaged variable is an error naming it, got %v", err)
	}
}
