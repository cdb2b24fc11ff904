package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/gpu"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// DiscoverHere runs the drivers of cfg in this environment (as 'yarn-am discover' does, outside a
// container: the built-in GPU scripts are written to a temporary directory, and they coordinate only
// when the args ask for it, docs/gpus.md#coordination-co-located-workers-never-share-a-gpu), prints what
// a worker would get (every property of each info, a GPU's uuid included, or the info file as JSON) and
// releases the drivers' claims.
func DiscoverHere(ctx context.Context, cfg *resources.Config, drivers map[string]resources.Driver, asJSON bool, stdout io.Writer) error {
	tmp, err := os.MkdirTemp("", "yarn-am-discover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, d := range drivers {
		if g, ok := d.(*gpu.Driver); ok {
			g.WorkDir = tmp
		}
	}
	infos, err := DiscoverAll(ctx, cfg.Resources, drivers)
	if err != nil {
		var df *DiscoveryFailure
		if errors.As(err, &df) {
			return fmt.Errorf("discovery failed for resource %q: %w", df.Resource, df.Err)
		}
		return err
	}
	var ordered []resources.Driver
	for _, r := range cfg.Resources {
		if d, ok := drivers[r.Name]; ok {
			ordered = append(ordered, d)
		}
	}
	defer ReleaseAll(context.Background(), ordered, logrus.StandardLogger())

	path, err := resources.WriteInfoFile(tmp, infos)
	if err != nil {
		return err
	}
	if asJSON {
		data, err := boundedread.ReadFile("external-resource info file", path, "the file yarn-am discover writes", resources.MaxInfoFileBytes)
		if err != nil {
			return err
		}
		_, _ = stdout.Write(data)
		return nil
	}
	printDiscovery(stdout, cfg, drivers, infos)
	return nil
}

func printDiscovery(w io.Writer, cfg *resources.Config, drivers map[string]resources.Driver, infos map[string][]resources.Info) {
	if len(cfg.Resources) == 0 {
		fmt.Fprintln(w, "No external resources are configured (external-resources is unset or none).")
		return
	}
	for _, r := range cfg.Resources {
		driver := "no driver: the worker gets no infos"
		if r.Driver != "" {
			driver = "driver " + r.Driver
		}
		fmt.Fprintf(w, "%s: %d x %s (%s)\n", r.Name, r.Amount, r.YarnKey, driver)
		for i, in := range infos[r.Name] {
			var props []string
			for _, k := range in.Keys() {
				props = append(props, shownValue(k)+"="+shownValue(in[k]))
			}
			fmt.Fprintf(w, "  [%d] %s\n", i, strings.Join(props, " "))
		}
		if g, ok := drivers[r.Name].(*gpu.Driver); ok {
			if t := g.Topology(); t != nil {
				// Only where the script read one: a machine without topology prints what it always did.
				fmt.Fprintf(w, "  topology (nvidia-smi topo -m): the GPUs above are linked by %s at worst\n", t.Link)
				for _, l := range gpu.TopologyLines(*t) {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "A worker started by 'yarn-am launch' in this environment would get:")
	const placeholder = "<working directory>/" + contract.InfoFileName
	env := WorkerEnv(nil, placeholder, infos, drivers)
	sort.Strings(env)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "YARN_AM_") {
			if cur := os.Getenv(k); cur != "" {
				fmt.Fprintf(w, "  %s=%s (already set here: the worker keeps it; yarn-am would set %s)\n", k, shownValue(cur), shownValue(v))
				continue
			}
		}
		fmt.Fprintf(w, "  %s=%s\n", k, shownValue(v))
	}
}

// shownValue is a value printed by discover: a discovery script's output or this environment's, so
// quoted (text.Quote: bounded, control characters escaped) unless it is short and holds no control
// character (TestDiscoverPrintsHostileValuesInert).
func shownValue(s string) string {
	if len(s) <= text.MaxQuotedValue && text.Sanitize(s) == s && !strings.ContainsAny(s, "\t\n") {
		return s
	}
	return text.Quote(s)
}

// topologyReader is a driver that read a GPU topology in its last discovery (gpu.Driver).
type topologyReader interface {
	Topology() *contract.GPUTopology
}

// topologies is the topology each driver read in its discovery, by resource name (nil when none read
// one): the report carries it to the AM, which says when a set is worse than the node's best and
// draws the links on the GPU map (docs/gpus.md#topology-connected-sets).
func topologies(drivers map[string]resources.Driver) map[string]contract.GPUTopology {
	var out map[string]contract.GPUTopology
	for name, d := range drivers {
		tr, ok := d.(topologyReader)
		if !ok {
			continue
		}
		if t := tr.Topology(); t != nil {
			if out == nil {
				out = map[string]contract.GPUTopology{}
			}
			out[name] = *t
		}
	}
	return out
}
