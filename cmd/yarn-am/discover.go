package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/contract"
	"github.com/yarn-am/yarn-am/container/launcher"
	"github.com/yarn-am/yarn-am/gpu"
	"github.com/yarn-am/yarn-am/resources"
)

const discoverUsage = `Usage: yarn-am discover [-f job.toml] [--flink-conf FILE] [-D key=value]... [--json] [-v]

Validates the external-resource configuration, runs the configured drivers (GPU discovery scripts) on
this machine and prints what a worker started by 'yarn-am launch' would get: the infos of every
resource and the environment variables. Use it to debug a discovery script or a configuration before
submitting. GPUs claimed in coordination mode are released again before it exits; the built-in
discovery scripts are written to a temporary directory, not the current one.

Flags:
  -f FILE             job file (job.toml) with the external-resource keys
  --flink-conf FILE   flink-conf.yaml / config.yaml with the external-resource keys
  -D key=value        set one configuration key; repeatable; wins over both files (-Dkey=value works too)
  --json              print exactly the content of the external-resources.json a worker would get
  -v                  log what the drivers do (to stderr)

Exit codes: 0 discovery succeeded; 1 discovery failed (the reason is printed); 2 invalid configuration
or flags (every problem is printed).`

func init() {
	register(&command{
		name:    "discover",
		summary: "run the resource drivers here and print what a worker would get",
		usage:   discoverUsage,
		run:     runDiscover,
	})
}

func runDiscover(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("discover", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f extResFlags
	f.register(fs)
	asJSON := fs.Bool("json", false, "print external-resources.json")
	verbose := fs.Bool("v", false, "verbose")
	if err := fs.Parse(splitJoinedDefines(args)); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintln(stdout, discoverUsage)
			return 0
		}
		fmt.Fprintf(stderr, "yarn-am discover: %v\nRun 'yarn-am help discover' for usage.\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "yarn-am discover: unexpected argument %q; run 'yarn-am help discover' for usage\n", fs.Arg(0))
		return 2
	}
	lvl := logrus.WarnLevel
	if *verbose {
		lvl = logrus.DebugLevel
	}
	setLogLevel(stderr, lvl)
	cfg, drivers, ok := loadExtRes(&f, "yarn-am discover", stderr)
	if !ok {
		return 2
	}

	tmp, err := os.MkdirTemp("", "yarn-am-discover-")
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am discover: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	for _, d := range drivers {
		if g, ok := d.(*gpu.Driver); ok {
			g.WorkDir = tmp
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	infos, err := launcher.DiscoverAll(ctx, cfg.Resources, drivers)
	if err != nil {
		var df *launcher.DiscoveryFailure
		if errors.As(err, &df) {
			fmt.Fprintf(stderr, "yarn-am discover: discovery failed for resource %q: %v\n", df.Resource, df.Err)
		} else {
			fmt.Fprintf(stderr, "yarn-am discover: %v\n", err)
		}
		return 1
	}
	var ordered []resources.Driver
	for _, r := range cfg.Resources {
		if d, ok := drivers[r.Name]; ok {
			ordered = append(ordered, d)
		}
	}
	defer launcher.ReleaseAll(context.Background(), ordered, logrus.StandardLogger())

	path, err := resources.WriteInfoFile(tmp, infos)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am discover: %v\n", err)
		return 1
	}
	if *asJSON {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "yarn-am discover: %v\n", err)
			return 1
		}
		_, _ = stdout.Write(data)
		return 0
	}
	printDiscovery(stdout, cfg, drivers, infos)
	return 0
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
				props = append(props, k+"="+in[k])
			}
			fmt.Fprintf(w, "  [%d] %s\n", i, strings.Join(props, " "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "A worker started by 'yarn-am launch' in this environment would get:")
	const placeholder = "<working directory>/" + contract.InfoFileName
	env := launcher.WorkerEnv(nil, placeholder, infos, drivers)
	sort.Strings(env)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "YARN_AM_") {
			if cur := os.Getenv(k); cur != "" {
				fmt.Fprintf(w, "  %s=%s (already set here: the worker keeps it; yarn-am would set %s)\n", k, cur, kv[len(k)+1:])
				continue
			}
		}
		fmt.Fprintf(w, "  %s\n", kv)
	}
}
