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
// (release.go, and MarkSick for a GPU that reads unhealthy), report (sample.go: sampling the utilisation,
// memory, power and health of the GPUs a container was given with one nvidia-smi or rocm-smi call,
// ToolSampler; the launcher runs it, docs/running.md#gpu-utilisation).
//
// Seams: the driver never executes a script itself; it goes through the ScriptRunner interface. The
// real runner is resources.RunDiscoveryResult with IndexRule (shared with the exec driver); unit tests use
// a fake runner, and the script tests run the real scripts against the fake nvidia-smi in
// testdata/fake-nvidia-smi (TestCoordinationMultiUser as several real users).
//
// # Discovery output
//
// Whatever a script prints becomes CUDA_VISIBLE_DEVICES, so it is checked: the first line of stdout
// must hold distinct non-negative integers, comma-separated and compared as numbers ("0,0", "00,0",
// "hello world" and "-1,abc;def" fail discovery with the output quoted, at most 200 bytes, control
// characters removed). An optional later line "uuids=U0,U1,..." gives each index's UUID (empty where
// unknown); it becomes the infos' "uuid" (InfoUUID), which the launcher reports to the AM. At most 64
// KiB is read from stdout and from stderr each; a script that prints more is killed with its whole
// process group, as on timeout and once it is done, and a child that left the group holding the output
// is killed with its session (see resources.RunDiscoveryResult). What a successful script prints on
// stderr is logged as warnings.
//
// # Flags of the built-in scripts (external-resource.<name>.param.discovery-script.args)
//
//	(none)                       coordination on in YARN containers (CONTAINER_ID set), off elsewhere
//	--enable-coordination-mode   coordination on; failing to coordinate is an error
//	--enable-coordination        the same (the spelling of Flink's documentation)
//	--no-coordination            coordination off: the first GPUs, no claims
//	--coordination-dir DIR       where the claims are kept (absolute)
//	--coordination-file FILE     Flink's flag: FILE.d where FILE's directory is safe, else as if absent
//	--lock-timeout SECONDS       how long to wait for the directory's lock (1-9999; default 30)
//	--topology MODE              more than one GPU: prefer (default) the best connected set free, warning
//	                             when it is worse than the node's best; connected: fail when no
//	                             NVLink-connected set is free; any: read no topology
//
// They are checked when the configuration is validated (CheckBuiltinScriptArgs, called by the driver
// factory, so `yarn-am check` reports them before anything is staged): an unknown or misspelled flag,
// --release (the driver's own), a relative place, two places, --no-coordination with anything that asks
// for coordination, a bad lock timeout, a --lock-timeout not shorter than discovery-script.timeout, a
// --topology other than connected, prefer or any, and --topology connected with vendor amd are errors
// naming the key, the value and the valid flags. A custom discovery-script.path's args are
// that script's business.
//
// # GPU coordination
//
// The built-in script claims the GPUs it hands out so that co-located workers never share one
// (docs/gpus.md#coordination-co-located-workers-never-share-a-gpu). The claims are kept in
// --coordination-dir, else FILE.d of a safe --coordination-file, else the shared directory
// /var/lib/yarn-am/gpu when it exists (an administrator creates it once per node:
// install -d -m 3770 -o root -g <group of the container users> /var/lib/yarn-am/gpu), else a private
// directory of the user (yarn-am-gpu in YARN's per-user directory of the node, LOCAL_USER_DIRS), which
// covers the user's own containers only and says so once per node. Where coordination cannot work
// (no usable private directory, /proc with hidepid) the default warns and hands out GPUs without claims;
// an explicit flag makes it an error.
//
// GPUs are claimed by UUID (nvidia-smi's GPU-..., rocm-smi's unique id), by index only when the vendor
// tool gives none: under YARN's GPU isolation each container numbers its GPUs from 0, so indexes of two
// containers collide although their GPUs differ (TestCoordinationByUUIDUnderIsolation).
//
// Each user's claims are in a file claims.<uid>@<NM_HOST>.<random> named by mktemp, so no one can take a
// user's name first; a file is a uid's only when that uid owns it. Everything else among the claim files
// (symbolic links, non-regular files, files owned by another uid than their name says, files over 16
// KiB or 64 claims, more than 4 files of one uid) is skipped with a warning naming it: a member can
// spoil only its own claims, never stop another's discovery (TestCoordinationSkipsInvalidClaimFiles).
// The work under the directory's lock (an exclusive flock on the directory itself) is bounded that way
// too. A claim line is "<gpu> <owner pid> <owner start time>", <gpu> being uuid:<UUID> or index:<n>; the
// owner is the process that ran the script (yarn-am launch, which lives as long as the worker), and a
// claim counts only while that process (same pid and start time, not a zombie) runs as the file's
// owner. Release (the driver runs it when the worker has exited) removes the caller's claims at once.
// A line "sick uuid:<UUID> <unix time>" in a user's claim file marks a GPU out of service: the launcher
// runs the script's --mark-sick mode (Driver.MarkSick) when its sampler reads one of its GPUs
// unhealthy, and every discovery of the node skips a marked GPU while it still reads unhealthy (or its
// health cannot be read); once it reads healthy it is handed out again and the caller's own marks of it
// go (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service, TestSickGPUIsKeptOutOfClaimsUntilItReadsHealthy).
// Because claims are judged by their owner's /proc entry, coordination needs every container of the
// node in the host's pid namespace (not Docker) and a /proc where other users' processes are visible.
//
// What this protects against, and what not: a user outside the shared directory's group cannot read,
// claim, wipe or lock anything. A member cannot remove, truncate or replace another user's claims,
// cannot make claims for processes it does not own, cannot make another member's script follow a
// planted link, and cannot make anyone's discovery fail by planting files. A member can still claim
// every free GPU for processes of its own, and can hold the directory's lock: others then wait at most
// --lock-timeout seconds and fail naming the holder's pid and user. Coordination is a protocol between
// cooperating workers; it does not stop a process from using a GPU it did not claim. For that, use
// YARN's isolation.
//
// # Topology
//
// For more than one GPU the NVIDIA script chooses the set by the matrix of `nvidia-smi topo -m`
// (docs/gpus.md#topology-connected-sets): among the GPUs it may take, every pair linked by NVLink, else
// the best worst-pair PCIe level (PIX, PXB, PHB, NODE, SYS), within one NUMA node before across, the
// first such set in the listing's order; under the directory's lock like every claim. The read is
// bounded (5 s, 64 KiB, 16 GPUs); a matrix it cannot read or parse is a warning and the choice made
// without topology (the first free GPUs). With --topology wait it gives the lock up while no
// NVLink-connected set is free and looks again every 0.5 s, up to --lock-timeout. It says what it read
// in a stdout line "topology=..." (TopologyLinePrefix; with the node's best link when the set taken is
// worse), which the driver parses (ParseTopologyLine) and keeps (Driver.Topology) for yarn-am discover
// and the launcher's report to the AM (contract.GPUTopology: the gpu-topology event, the GPU map).
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
// on real GPUs (the tests use a fake nvidia-smi). Coordination is not needed under YARN's isolation:
// the default claims are harmless there (each GPU has its own UUID), and --no-coordination turns them
// off.
package gpu
