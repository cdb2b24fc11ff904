package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDefinesSetJobKeys: -D sets any job key, over the job file, read as the file would hold it; the
// external-resource ones still reach resources.Load.
func TestDefinesSetJobKeys(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(job, []byte("name = \"a\"\ntags = [\"x\"]\n[taskexecutor]\ncommand = \"./w\"\ninstances = 2\nmemory = \"1g\"\n[taskexecutor.env]\nA = \"1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lj, err := LoadJob(job, JobOptions{Defines: []string{
		"taskexecutor.instances=4", "taskexecutor.memory=2g", "name=b", "tags=p;q", "am.vcores=2",
		"taskexecutor.env.A=2", "taskexecutor.env.B=x=y", "taskexecutor.gang=true", "taskexecutor.gang-timeout=90s",
		"policy.max-failure-rate=5", "external-resources=none", "priority=3", "taskexecutor.command=./w --flag",
	}})
	if err != nil {
		t.Fatal(err)
	}
	te := lj.Job.TaskExecutor
	if te.Instances != 4 || te.MemoryMB != 2048 || lj.Job.Name != "b" || strings.Join(lj.Job.Tags, ",") != "p,q" || lj.Job.AM.VCores != 2 ||
		te.Env["A"] != "2" || te.Env["B"] != "x=y" || !te.Gang || te.GangTimeout != 90*time.Second || lj.Job.Priority != 3 || te.Command != "./w --flag" {
		t.Errorf("job after -D: %+v", lj.Job)
	}
	if len(lj.Resources.Resources) != 0 {
		t.Errorf("external-resources=none not applied: %+v", lj.Resources)
	}
	// --name wins over -D name.
	name := "c"
	if lj, err := LoadJob(job, JobOptions{Defines: []string{"name=b"}, Name: &name}); err != nil || lj.Job.Name != "c" {
		t.Errorf("--name with -D name: %v, %v", lj, err)
	}
}

// TestDefinesAreValidatedLikeTheFile: a -D job value gets the file's own message.
func TestDefinesAreValidatedLikeTheFile(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(job, []byte("[taskexecutor]\ncommand = \"./w\"\nmemory = \"lots\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fileErr := LoadJob(job, JobOptions{})
	if err := os.WriteFile(job, []byte("[taskexecutor]\ncommand = \"./w\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, defErr := LoadJob(job, JobOptions{Defines: []string{"taskexecutor.memory=lots"}})
	if fileErr == nil || defErr == nil || fileErr.Error() != defErr.Error() {
		t.Errorf("file: %v\n-D:   %v\nwant the same error", fileErr, defErr)
	}
	for d, want := range map[string]string{
		"taskexecutor.instance=4":     `did you mean "taskexecutor.instances"`,
		"taskexecutor.instances=1.5":  "taskexecutor.instances = 1.5",
		"max-attempts=0":              "from 1 to 100",
		"policy.pending-timeout=soon": "policy.pending-timeout",
		"taskexecutor.env.1A=x":       "not a valid environment variable name",
	} {
		_, err := LoadJob(job, JobOptions{Defines: []string{d}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-D %s: %v, want %q", d, err, want)
		}
	}
}
