package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// DriverName is the name the GPU driver registers under (external-resource.<name>.driver-factory.class).
const DriverName = "gpu"

// FlinkFactoryClass is Flink's GPU driver factory class, accepted as an alias of DriverName so Flink
// configurations work unchanged.
const FlinkFactoryClass = "org.apache.flink.externalresource.gpu.GPUDriverFactory"

// Parameter names (external-resource.<name>.param.<p>).
const (
	ParamScriptPath    = "discovery-script.path"
	ParamScriptArgs    = "discovery-script.args"
	ParamScriptTimeout = "discovery-script.timeout"
	ParamVendor        = "vendor"
)

// DefaultTimeout is how long a discovery script may run when discovery-script.timeout is not set.
const DefaultTimeout = 60 * time.Second

// Vendor selects the built-in script and the visibility variable of the worker.
type Vendor string

// The supported vendors.
const (
	VendorNVIDIA Vendor = "nvidia"
	VendorAMD    Vendor = "amd"
)

func (v Vendor) scriptName() string { return string(v) + "-gpu-discovery.sh" }

// VisibilityVar is the variable that restricts the GPUs a worker's GPU runtime uses:
// CUDA_VISIBLE_DEVICES (NVIDIA) or HIP_VISIBLE_DEVICES (AMD).
func (v Vendor) VisibilityVar() string {
	if v == VendorAMD {
		return contract.EnvHIPVisibleDevices
	}
	return contract.EnvCUDAVisibleDevices
}

func init() {
	if err := resources.RegisterDriver(DriverName, Factory); err != nil {
		// Only a programming error (two packages claiming "gpu") gets here; there is no caller to return
		// to, and configurations naming the driver will then say it is unknown.
		logrus.WithError(err).WithField("driver", DriverName).Error("gpu: driver not registered")
	}
	resources.RegisterAlias(FlinkFactoryClass, DriverName)
}

// Config is the validated parameter set of one GPU resource.
type Config struct {
	Resource   string        // the resource name (for messages)
	Vendor     Vendor        // nvidia (default) or amd
	ScriptPath string        // "" = the built-in script of Vendor
	ScriptArgs string        // passed to the script after the amount, split as a shell would
	Timeout    time.Duration // > 0
}

// ParseParams validates the param.* subtree of a GPU resource without running anything. Every problem
// is reported, each naming the full key, its value and what would be valid.
func ParseParams(resource string, params map[string]string) (Config, error) {
	cfg := Config{Resource: resource, Vendor: VendorNVIDIA, Timeout: DefaultTimeout}
	key := func(p string) string { return "external-resource." + resource + ".param." + p }
	var probs []string

	var unknown []string
	for p := range params {
		switch p {
		case ParamScriptPath, ParamScriptArgs, ParamScriptTimeout, ParamVendor:
		default:
			unknown = append(unknown, p)
		}
	}
	sort.Strings(unknown)
	for _, p := range unknown {
		probs = append(probs, fmt.Sprintf("%s = %q: unknown parameter of the gpu driver; valid parameters: %s, %s, %s, %s",
			key(p), params[p], ParamScriptPath, ParamScriptArgs, ParamScriptTimeout, ParamVendor))
	}

	if v, ok := params[ParamVendor]; ok {
		switch Vendor(strings.ToLower(strings.TrimSpace(v))) {
		case VendorNVIDIA:
			cfg.Vendor = VendorNVIDIA
		case VendorAMD:
			cfg.Vendor = VendorAMD
		default:
			probs = append(probs, fmt.Sprintf("%s = %q: unknown GPU vendor; valid values: nvidia (the default), amd", key(ParamVendor), v))
		}
	}

	if v, ok := params[ParamScriptTimeout]; ok {
		d, err := parseTimeout(v)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s = %q: %v", key(ParamScriptTimeout), v, err))
		} else {
			cfg.Timeout = d
		}
	}

	cfg.ScriptArgs = params[ParamScriptArgs]
	if _, custom := params[ParamScriptPath]; custom {
		// A custom script's flags are its own business; they only have to split.
		if _, err := resources.SplitArgs(cfg.ScriptArgs); err != nil {
			probs = append(probs, fmt.Sprintf("%s = %q: %v", key(ParamScriptArgs), cfg.ScriptArgs, err))
		}
	} else if sa, err := CheckBuiltinScriptArgs(resource, cfg.ScriptArgs, cfg.Timeout); err != nil {
		probs = append(probs, err.Error())
	} else if (sa.Topology == TopologyConnected || sa.Topology == TopologyWait) && cfg.Vendor == VendorAMD {
		// The AMD script reads no topology, so it could never keep the promise (docs/gpus.md#topology-connected-sets).
		probs = append(probs, fmt.Sprintf("%s = %q: %s %s needs the GPU topology, which only the NVIDIA script reads (nvidia-smi topo -m); with %s = amd use %s %s or %s",
			key(ParamScriptArgs), cfg.ScriptArgs, FlagTopology, sa.Topology, key(ParamVendor), FlagTopology, TopologyPrefer, TopologyAny))
	}

	if p, ok := params[ParamScriptPath]; ok {
		if msg := checkScriptPath(p); msg != "" {
			probs = append(probs, fmt.Sprintf("%s = %q: %s; leave %s out to use yarn-am's built-in %s discovery script",
				key(ParamScriptPath), p, msg, key(ParamScriptPath), cfg.vendorTitle()))
		} else {
			cfg.ScriptPath = p
		}
	}

	if len(probs) > 0 {
		// One line: the resources package lists each resource's problems as one item.
		return Config{}, fmt.Errorf("%s", strings.Join(probs, "; "))
	}
	return cfg, nil
}

func (c Config) vendorTitle() string {
	if c.Vendor == VendorAMD {
		return "AMD"
	}
	return "NVIDIA"
}

// parseTimeout accepts a Go duration ("90s", "2m") or plain seconds ("60").
func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(n * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("not a duration; use a Go duration such as 90s or 2m, or plain seconds such as 60")
	}
	if d <= 0 {
		return 0, fmt.Errorf("the timeout must be positive; use a Go duration such as 90s or 2m, or plain seconds such as 60")
	}
	return d, nil
}

// checkScriptPath returns "" when path names an executable regular file, else what is wrong with it.
func checkScriptPath(path string) string {
	if strings.TrimSpace(path) == "" {
		return "the path is empty"
	}
	st, err := os.Stat(path)
	if err != nil {
		where := path
		if !filepath.IsAbs(path) {
			if wd, werr := os.Getwd(); werr == nil {
				where = filepath.Join(wd, path)
			}
			if os.IsNotExist(err) {
				return fmt.Sprintf("the file does not exist (relative paths are resolved against the current directory: %s)", where)
			}
		}
		if os.IsNotExist(err) {
			return "the file does not exist"
		}
		return fmt.Sprintf("cannot use the file: %v", err)
	}
	if st.IsDir() {
		return "this is a directory, not a script"
	}
	if st.Mode().Perm()&0o111 == 0 {
		return "the file is not executable (chmod +x it)"
	}
	return ""
}

// Factory is the resources.DriverFactory of the GPU driver: it validates params and returns a *Driver
// that runs scripts through resources.RunDiscoveryResult.
func Factory(resourceName string, params map[string]string) (resources.Driver, error) {
	cfg, err := ParseParams(resourceName, params)
	if err != nil {
		return nil, err
	}
	return New(cfg, ExecRunner{}), nil
}

// Driver is the GPU driver of one resource. It implements resources.Driver, resources.EnvProvider and
// resources.Releaser. A Driver is safe for concurrent use.
type Driver struct {
	cfg    Config
	runner ScriptRunner
	// WorkDir is where the built-in script is written out (under ScriptDir); "" means the current
	// directory, the container's working directory under YARN.
	WorkDir string

	mu       sync.Mutex
	claimed  []claim   // coordinated discoveries not yet released
	topology *Topology // what the last discovery's built-in script read; nil when it read none
}

type claim struct {
	script string
	args   []string
}

// New returns a driver for cfg that runs scripts through runner.
func New(cfg Config, runner ScriptRunner) *Driver {
	if cfg.Vendor == "" {
		cfg.Vendor = VendorNVIDIA
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Driver{cfg: cfg, runner: runner}
}

// Config returns the driver's validated configuration.
func (d *Driver) Config() Config { return d.cfg }
