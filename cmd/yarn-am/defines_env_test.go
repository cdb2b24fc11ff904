package main

import (
	"strings"
	"testing"

	"github.com/yarn-am/yarn-am/contract"
)

// TestDefinesComeFromTheEnvironment: launch takes the -D overrides from contract.EnvDefines
// (contract.TakeDefines) and applies them: a bad amount from the environment is its configuration
// error, naming the key.
func TestDefinesComeFromTheEnvironment(t *testing.T) {
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
