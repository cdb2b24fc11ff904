// Package gpu is yarn-am's GPU driver for the external-resource framework (## Contracts in
// docs/design.md): it finds the GPUs a TaskExecutor may use by running a discovery script, hands their
// indexes to the worker (as resources.Info{"index": ...} and CUDA_VISIBLE_DEVICES /
// HIP_VISIBLE_DEVICES), and releases the coordination claims it took when the worker is gone.
//
// The driver registers itself (init) as "gpu" and under Flink's factory class name
// org.apache.flink.externalresource.gpu.GPUDriverFactory; importing the package is all a binary needs.
//
// Phases, one file each: configure (driver.go: params, validation without running anything; args.go:
// the built-in scripts' flags, CheckBuiltinScriptArgs), discover (discover.go: the built-in scripts
// written out and run, output checked, Env), coordinate (scripts/: the coordination between co-located
// workers lives in the scripts, so a custom script can take part in the same protocol), release
// (release.go).
//
// Seams: the driver never executes a script itself; it goes through the ScriptRunner interface. The
// real runner is resources.RunDiscoveryWith with IndexRule (shared with the exec driver); unit tests use
// a fake runner, and the script tests run the real scripts against the fake nvidia-smi in
// testdata/fake-nvidia-smi (TestCoordinationMultiUser as several real users).
//
// # Discovery output
//
// Whatever a script prints becomes CUDA_VISIBLE_DEVICES, so it is checked: the first line of stdout
// must hold distinct non-negative integers, comma-separated ("0,0", "hello world" and "-1,abc;def"
// fail discovery with the output quoted, at most 200 bytes, control characters removed). At most 64 KiB
// is read from stdout and from stderr each; a script that prints more is killed with its whole process
// group, as on timeout and once it is done (a background child it left behind does not outlive
// discovery). See resources.RunDiscoveryWith.
//
// # Flags of the built-in scripts (external-resource.<name>.param.discovery-script.args)
//
//	--enable-coordination-mode   claim GPUs so co-located workers never share one
//	--enable-coordination        the same (the spelling of Flink's documentation)
//	--coordination-dir DIR       where the claims are kept (absolute; default /var/lib/yarn-am/gpu)
//	--lock-timeout SECONDS       how long to wait for the directory's lock (1-9999; default 30)
//
// They are checked when the configuration is validated (CheckBuiltinScriptArgs, called by the driver
// factory, so `yarn-am check` reports them before anything is staged): an unknown or misspelled flag,
// --coordination-file (the old shared file, no longer supported), --release (the driver's own), a
// relative directory, a bad lock timeout, --coordination-dir or --lock-timeout without coordination
// mode, or a --lock-timeout not shorter than discovery-script.timeout are errors naming the key, the
// value and the valid flags. A custom discovery-script.path's args are that script's business.
//
// # GPU coordination
//
// Without coordination every worker on a node that asks for n GPUs gets the first n the node lists, so
// two containers on one node share GPUs unless YARN isolates them (see below). With
// --enable-coordination-mode the built-in script claims GPUs in a coordination directory and hands out
// only unclaimed ones.
//
// The directory is created once per node by an administrator:
//
//	install -d -m 3770 -o root -g <group> /var/lib/yarn-am/gpu
//
// where <group> has every user that runs containers as a member (with the LinuxContainerExecutor the
// submitting users, or the single run-as user of yarn.nodemanager.linux-container-executor
// .nonsecure-mode.local-user; with the DefaultContainerExecutor the NodeManager's user). Setgid (2000)
// gives claim files the directory's group; sticky (1000) lets only a file's owner remove or replace it.
// When all containers of a node run as one user, a directory of that user's own works as well: name it
// with --coordination-dir; if it does not exist the script creates it, mode 0700. The default directory
// is never created by the script: when it is missing, coordinated discovery fails with a message that
// names it and the install command above.
//
// The script refuses a directory that is a symbolic link, that every user can write, that its group can
// write without the sticky bit, or that is owned by another user than root and the caller.
//
// Each user's claims are in its own file in the directory, claims.<uid>@<NM_HOST> (claims.<uid> outside
// YARN), mode 0640 with the directory's group; a line is "<index> <owner pid> <owner start time>". The
// owner is the process that ran the script (yarn-am launch, which lives as long as the worker); a claim
// counts only while that process (same pid and start time, not a zombie) runs as the file's owner. A
// user's file is only ever replaced by that user, by writing a new file (mktemp) and renaming it over
// the old one; no process opens another user's file for writing or with O_CREAT, which is why
// fs.protected_regular (on by default on current distributions) does not get in the way. The read of
// every file and the rewrite of one's own happen under an exclusive flock on the directory itself,
// opened read-only, so there is no lock file either. Claims of owners that have exited are ignored and
// leave their file the next time its user runs the script; release (the driver runs it when the worker
// has exited) removes the caller's claims at once. Symbolic links, non-regular files and files owned by
// another uid than their name says are refused with an error naming the file. Because claims are judged
// by their owner's /proc entry, coordination needs every container of the node in the host's pid
// namespace (not Docker) and a /proc where other users' processes are visible: a /proc mounted with
// hidepid is refused unless the caller is in its gid= group.
//
// What this protects against, and what not: a user outside the group cannot read, claim, wipe or lock
// anything (it cannot open the directory). A member cannot remove, truncate or replace another user's
// claims, cannot make claims for processes it does not own, and cannot make another member's script
// follow a planted link. A member can still claim every free GPU for processes of its own, and can hold
// the directory's lock: others then wait at most --lock-timeout seconds and fail naming the holder's pid
// and user. Coordination is a protocol between cooperating workers; it does not stop a process from
// using a GPU it did not claim. For that, use YARN's isolation.
//
// # YARN's own GPU isolation
//
// The stronger alternative is the NodeManager's GPU resource plugin: yarn.nodemanager.resource-plugins =
// yarn.io/gpu in yarn-site.xml (with yarn.io/gpu in yarn.resource-types, the DominantResourceCalculator,
// the LinuxContainerExecutor, and [gpu] module.enabled=true in container-executor.cfg). The NodeManager
// then assigns GPUs to containers itself and enforces it: without Docker through the cgroups devices
// controller (a container cannot open the other GPUs' device files); with Docker through its docker
// plugin (nvidia-docker-v2 runs the container with the nvidia runtime and NVIDIA_VISIBLE_DEVICES set to
// the host indexes of the assigned GPUs). Inside such a Docker container nvidia-smi lists only the
// container's GPUs, numbered from 0, so the built-in script reports 0..n-1, and the worker's
// CUDA_VISIBLE_DEVICES is 0..n-1, which is what the CUDA runtime inside the container calls them. The
// script ignores NVIDIA_VISIBLE_DEVICES on purpose: there it holds the host's indexes, which nothing
// inside the container uses (TestRealScriptInsideIsolatedContainer); outside a container it restricts
// nothing. CUDA_VISIBLE_DEVICES, when set, still restricts the GPUs the script reports. With the cgroups
// controller alone the script reports what nvidia-smi lists in the container; this has not been tried
// on real GPUs (the tests use a fake nvidia-smi). Coordination is not needed under YARN's isolation;
// leave --enable-coordination-mode out (with it, the coordination directory would have to exist inside
// the container too).
package gpu
