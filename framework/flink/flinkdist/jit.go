package flinkdist

// The JIT of a Flink JVM's start (docs/flink.md#the-jit-at-start). HotSpot's tiered compilation
// compiles a method first with C1 (tier 3, with profiling) and, once it has been called or has
// looped often enough, again with C2 (tier 4), which optimises harder and costs far more CPU per
// method. A JobManager's or TaskManager's start runs much code often enough for C2 but only for a
// few seconds (configuration parsing, the actor system, TLS set-up): on a container of few cores,
// with several JVMs starting at once, C2 compiling that code takes the CPU the start needs.
// LateC2Flags raise the four tier-4 thresholds a hundredfold: code run during the start stays at
// C1, code that keeps running (a task's per-record path at any real rate) still reaches C2, after
// a number of calls that costs a bounded amount of extra CPU per method, not a share of the
// throughput.

// LateC2Flags are the JVM flags of [flink] jit-late-c2 (default on): HotSpot's tier-4 (C2)
// thresholds, each a hundred times the JDK's default (Tier4InvocationThreshold 5,000, Tier4MinInvocationThreshold 600,
// Tier4CompileThreshold 15,000, Tier4BackEdgeThreshold 40,000 in JDK 11 to 21).
var LateC2Flags = []string{
	"-XX:Tier4InvocationThreshold=500000",
	"-XX:Tier4MinInvocationThreshold=60000",
	"-XX:Tier4CompileThreshold=1500000",
	"-XX:Tier4BackEdgeThreshold=4000000",
}
