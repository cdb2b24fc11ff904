package gpu

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// Flags of the built-in discovery scripts (gpu/scripts/gpu-discovery-common.sh), as they may appear in
// discovery-script.args.
const (
	FlagCoordinationMode = "--enable-coordination-mode"
	FlagCoordination     = "--enable-coordination" // the spelling in Flink's documentation
	FlagNoCoordination   = "--no-coordination"
	FlagCoordinationDir  = "--coordination-dir"
	FlagCoordinationFile = "--coordination-file" // Flink's flag: see docs/gpus.md#flinks---coordination-file
	FlagLockTimeout      = "--lock-timeout"
	FlagTopology         = "--topology" // docs/gpus.md#topology-connected-sets
)

// Values of --topology: what the built-in NVIDIA script does for more than one GPU when no set connected
// by NVLink is free (docs/gpus.md#topology-connected-sets).
const (
	TopologyConnected = "connected" // fail discovery
	TopologyPrefer    = "prefer"    // the default: take the best set free and say so on stderr
	TopologyWait      = "wait"      // wait for a connected set, up to the lock timeout, without the lock
	TopologyAny       = "any"       // read no topology: the first free GPUs, as before topology was read
)

// DefaultCoordinationDir is the shared coordination directory an administrator creates on each node
// (see the package doc, "GPU coordination"). Where it does not exist, the built-in scripts coordinate in
// a private directory of the user.
const DefaultCoordinationDir = "/var/lib/yarn-am/gpu"

// DefaultLockTimeout is how long the built-in scripts wait for the coordination directory's lock.
const DefaultLockTimeout = 30 * time.Second

// waitMargin is how much longer than --lock-timeout --topology wait may take: its last look at the
// claims after the deadline (a sleep of 0.5 s, the lock taken for up to 1 s, the claims read, and
// bash's whole-second clock).
const waitMargin = 3 * time.Second

// validFlagsText lists the flags for error messages.
const validFlagsText = FlagCoordinationMode + " (or " + FlagCoordination + "; coordination is on by default in YARN containers), " +
	FlagNoCoordination + ", " + FlagCoordinationDir + " DIR (absolute; default " + DefaultCoordinationDir +
	" when it exists, else a private directory of the user), " + FlagCoordinationFile + " FILE (absolute; Flink's), " +
	FlagLockTimeout + " SECONDS (1-9999; default 30), " +
	FlagTopology + " " + TopologyConnected + "|" + TopologyPrefer + "|" + TopologyWait + "|" + TopologyAny + " (default " + TopologyPrefer + ")"

// ScriptArgs is what the built-in scripts make of discovery-script.args.
type ScriptArgs struct {
	Coordinate   bool // an --enable-coordination flag (or a place) was given: coordination failing is an error
	NoCoordinate bool // --no-coordination: GPUs are handed out without claims
	Dir          string
	File         string        // Flink's --coordination-file
	LockTimeout  time.Duration // 0 = DefaultLockTimeout
	Topology     string        // --topology: TopologyConnected, TopologyPrefer, TopologyWait or TopologyAny; "" = TopologyPrefer
}

// IndexRule is the id rule of the GPU driver: distinct non-negative integers (the indexes of
// CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES), at most 9 digits, compared as numbers ("00" is "0").
var IndexRule = resources.IDRule{
	Valid:    regexp.MustCompile(`^[0-9]{1,9}$`).MatchString,
	Describe: "distinct GPU indexes (non-negative integers), comma-separated on the first line, e.g. 0,1",
	Canon:    resources.NumericCanon,
}

// CheckBuiltinScriptArgs validates discovery-script.args for the built-in scripts before anything runs:
// unknown flags (a misspelled --enable-cordination would otherwise fail every container's discovery),
// flags the driver adds itself, contradictions and bad values are errors naming
// external-resource.<resource>.param.discovery-script.args, the value and the valid flags. A custom
// discovery-script.path's args are not checked: they are that script's business. scriptTimeout, when
// positive, is the discovery-script.timeout the lock wait must stay under.
func CheckBuiltinScriptArgs(resource, args string, scriptTimeout time.Duration) (ScriptArgs, error) {
	key := "external-resource." + resource + ".param." + ParamScriptArgs
	fail := func(format string, a ...any) (ScriptArgs, error) {
		return ScriptArgs{}, fmt.Errorf("%s = %q: %s; valid flags of the built-in discovery script: %s",
			key, args, fmt.Sprintf(format, a...), validFlagsText)
	}
	argv, err := resources.SplitArgs(args)
	if err != nil {
		return ScriptArgs{}, fmt.Errorf("%s = %q: %s; quote arguments as in a shell", key, args, strings.TrimPrefix(err.Error(), "resources: "))
	}
	var sa ScriptArgs
	var enableFlag, lockSet, placeSet string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		name, value, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			name, hasValue = a, false
		}
		switch name {
		case FlagCoordinationMode, FlagCoordination, FlagNoCoordination:
			if hasValue {
				return fail("%s takes no value", name)
			}
			if name == FlagNoCoordination {
				sa.NoCoordinate = true
			} else {
				sa.Coordinate, enableFlag = true, name
			}
			continue
		case FlagCoordinationDir, FlagCoordinationFile, FlagLockTimeout, FlagTopology:
			if !hasValue {
				if i+1 >= len(argv) || strings.HasPrefix(argv[i+1], "--") {
					return fail("%s needs a value", name)
				}
				i++
				value = argv[i]
			}
		case "--release":
			return fail("--release is the driver's: it runs the script's release mode itself once the worker is gone")
		case "--mark-sick":
			return fail("--mark-sick is the driver's: the launcher runs it when one of its GPUs reads unhealthy (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service)")
		default:
			if !strings.HasPrefix(a, "-") {
				return fail("unexpected argument %q: yarn-am passes the amount itself; the built-in script takes only flags", a)
			}
			return fail("unknown flag %q%s", name, text.DidYouMean(name, []string{FlagCoordinationMode, FlagCoordination, FlagNoCoordination, FlagCoordinationDir, FlagCoordinationFile, FlagLockTimeout, FlagTopology}))
		}
		switch name {
		case FlagCoordinationDir, FlagCoordinationFile:
			if !strings.HasPrefix(value, "/") {
				return fail("%s %q is not an absolute path (the workers of a node must name the same place)", name, value)
			}
			if placeSet != "" && placeSet != name {
				return fail("%s and %s both name where the claims are kept; give one", placeSet, name)
			}
			placeSet = name
			if name == FlagCoordinationDir {
				sa.Dir = value
			} else {
				sa.File = value
			}
		case FlagLockTimeout:
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > 9999 || value != strconv.Itoa(n) {
				return fail("%s %q is not a whole number of seconds between 1 and 9999", name, value)
			}
			sa.LockTimeout, lockSet = time.Duration(n)*time.Second, name
		case FlagTopology:
			switch value {
			case TopologyConnected, TopologyPrefer, TopologyWait, TopologyAny:
				if sa.Topology != "" && sa.Topology != value {
					return fail("%s %s and %s %s contradict each other; give one", name, sa.Topology, name, value)
				}
				sa.Topology = value
			default:
				return fail("%s %s is not one of %s (fail when no NVLink-connected set is free), %s (the default: take the best set free), %s (wait for a connected set, up to %s), %s (read no topology)",
					name, text.Quote(value), TopologyConnected, TopologyPrefer, TopologyWait, FlagLockTimeout, TopologyAny)
			}
		}
	}
	if sa.NoCoordinate {
		if enableFlag != "" {
			return fail("%s contradicts %s", FlagNoCoordination, enableFlag)
		}
		for _, f := range []string{placeSet, lockSet} {
			if f != "" {
				return fail("%s has no effect with %s", f, FlagNoCoordination)
			}
		}
	}
	if placeSet != "" {
		sa.Coordinate = true // naming a place asks for coordination
	}
	if sa.LockTimeout > 0 && scriptTimeout > 0 && sa.LockTimeout >= scriptTimeout {
		return fail("%s %d is not shorter than %s (%s): the script would be killed before it can say who holds the lock",
			FlagLockTimeout, int(sa.LockTimeout/time.Second), "external-resource."+resource+".param."+ParamScriptTimeout, scriptTimeout)
	}
	if lock := cmp.Or(sa.LockTimeout, DefaultLockTimeout); sa.Topology == TopologyWait && scriptTimeout > 0 && lock+waitMargin > scriptTimeout {
		// The wait's last look takes the lock once more after the deadline (gpu-discovery-common.sh).
		return fail("%s %s waits up to %s %d s, which with its last look (%s) is not shorter than %s (%s): the script would be killed while it waits; give a %s at least %s shorter",
			FlagTopology, TopologyWait, FlagLockTimeout, int(lock/time.Second), waitMargin, "external-resource."+resource+".param."+ParamScriptTimeout, scriptTimeout, FlagLockTimeout, waitMargin)
	}
	return sa, nil
}
