package main

import (
	"os"
	"strings"
	"testing"

	"github.com/yarn-am/yarn-am/contract"
)

// The AM and the launchers take the -D overrides from contract.EnvDefines (not their command lines,
// which every user of the node can read), the command line's after them, and leave the variable to
// neither the driver nor the worker.
func TestDefinesComeFromTheEnvironment(t *testing.T) {
	t.Setenv(contract.EnvDefines, contract.EncodeDefines([]string{"a=1", "s3.secret-key=x y"}))
	got, err := definesFromEnv([]string{"a=2"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a=1|s3.secret-key=x y|a=2" {
		t.Errorf("got %q", got)
	}
	if _, ok := os.LookupEnv(contract.EnvDefines); ok {
		t.Errorf("%s is still set for the driver and the worker", contract.EnvDefines)
	}

	t.Setenv(contract.EnvDefines, "not base64!")
	if _, err := definesFromEnv(nil); err == nil || !strings.Contains(err.Error(), contract.EnvDefines) {
		t.Errorf("a damaged variable is an error naming it, got %v", err)
	}

	// The launcher applies them: a bad amount from the environment is its configuration error.
	t.Chdir(t.TempDir())
	t.Setenv(contract.EnvDefines, contract.EncodeDefines([]string{"external-resources=gpu", "external-resource.gpu.amount=lots"}))
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	if code := run([]string{"launch", "--", "true"}, stdout, stderr); code != contract.LauncherConfigError {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, contract.LauncherConfigError, stderr.String())
	}
	if !strings.Contains(stderr.String(), "external-resource.gpu.amount") {
		t.Errorf("stderr does not name the key:\n%s", stderr.String())
	}
}
