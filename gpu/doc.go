// Package gpu is yarn-am's GPU driver for the external-resource framework (DESIGN.md §6): it finds the
// GPUs a TaskExecutor may use by running a discovery script, hands their indexes to the worker (as
// resources.Info{"index": ...} and CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES), and releases the
// coordination claims it took when the worker is gone.
//
// The driver registers itself (init) as "gpu" and under Flink's factory class name
// org.apache.flink.externalresource.gpu.GPUDriverFactory; importing the package is all a binary needs.
//
// Phases, one file each: configure (driver.go: params, validation without running anything), discover
// (discover.go: the built-in scripts written out and run, Env), coordinate (scripts/: the flock-based
// coordination between co-located workers lives in the scripts, so a custom or Flink script can take
// part in the same protocol), release (release.go).
//
// Seams: the driver never executes a script itself; it goes through the ScriptRunner interface. The
// real runner is resources.RunDiscovery (shared with the exec driver); unit tests use a fake runner,
// and integration tests run the real scripts against the fake nvidia-smi in testdata/fake-nvidia-smi.
package gpu
