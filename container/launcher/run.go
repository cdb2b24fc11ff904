package launcher

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// LoadResources loads and validates the external-resource configuration and builds its drivers. Problems and warnings are
// printed to stderr with prefix; ok is false if the configuration is unusable.
func LoadResources(src resources.Sources, prefix string, stderr io.Writer) (*resources.Config, map[string]resources.Driver, bool) {
	cfg, warnings, err := resources.Load(src)
	// As many of each as a list of problems shows (text.MaxListed), then their count: 20,001
	// overrides give a screen, not megabytes.
	warned, noted := 0, 0
	for _, w := range warnings {
		if w.Level == resources.LevelWarning {
			if warned++; warned <= text.MaxListed {
				fmt.Fprintf(stderr, "%s: warning: %s\n", prefix, w.Message)
			}
		} else if noted++; noted <= text.MaxListed {
			logrus.WithField("key", w.Key).Info(w.Message)
		}
	}
	if warned > text.MaxListed {
		fmt.Fprintf(stderr, "%s: warning: and %d more warnings\n", prefix, warned-text.MaxListed)
	}
	if noted > text.MaxListed {
		logrus.Infof("and %d more notes on the configuration", noted-text.MaxListed)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return nil, nil, false
	}
	drivers, err := cfg.Drivers()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return nil, nil, false
	}
	return cfg, drivers, true
}

// RunInContainer is `yarn-am launch` inside a TaskExecutor container: it reports to the AM
// (reportURL, else $YARN_AM_REPORT_URL), keeps the container's token file fresh when the AM serves
// tokens, and runs the Launcher for argv. It returns the launcher's exit code.
func RunInContainer(ctx context.Context, cfg *resources.Config, drivers map[string]resources.Driver, reportURL string, argv []string,
	stdin io.Reader, stdout, stderr io.Writer) int {
	reporter, err := ReporterFromEnv(reportURL)
	if err != nil {
		logrus.WithError(err).Warn("yarn-am launch: the resource infos will not be reported to the AM")
		reporter = NopReporter{}
	}
	// Both follow the AM to a new attempt's address (amlocate.go).
	var loc *AMLocator
	if hr, ok := reporter.(*HTTPReporter); ok {
		if loc, err = LocatorFromEnv(hr.BaseURL, logrus.StandardLogger()); err != nil {
			logrus.WithError(err).Warn("yarn-am launch: this launcher will not find the AM again if it restarts")
		}
		hr.Locator = loc
		hr.Samples = &SampleQueue{}
	}
	if tr, err := TokenFileRefresherFromEnv(logrus.StandardLogger()); err != nil {
		logrus.WithError(err).Warn("yarn-am launch: the token file will not be refreshed")
	} else if tr != nil {
		tr.Locator = loc
		tctx, stop := context.WithCancel(ctx)
		defer stop()
		go tr.Run(tctx)
	}
	l := &Launcher{
		Resources: cfg.Resources,
		Drivers:   drivers,
		Stdin:     stdin,
		Stdout:    stdout,
		Stderr:    stderr,
		Reporter:  reporter,
		// YARN signals the container's process group as a whole: the worker stays in it.
		InContainer: os.Getenv("CONTAINER_ID") != "",
		Gang:        os.Getenv(contract.EnvGang) == "1",
		Host:        os.Getenv("NM_HOST"),
	}
	if r, ok := reporter.(Rendezvouser); ok {
		l.Rendezvous = r
	}
	if name := os.Getenv(contract.EnvFramework); name != "" {
		fw, err := framework.Lookup(name)
		if err != nil {
			fmt.Fprintf(stderr, "yarn-am launch: %s=%s: %v\n", contract.EnvFramework, name, err)
			return contract.LauncherConfigError
		}
		l.Framework = fw
	}
	if hr, ok := reporter.(*HTTPReporter); ok && l.InContainer {
		l.GPUSampling = &GPUSampling{Interval: GPUSampleIntervalFromEnv(logrus.StandardLogger()), Queue: hr.Samples}
	}
	if n, ok := reporter.(Noticer); ok && l.InContainer {
		l.Preemption = PreemptionFromEnv(n, logrus.StandardLogger())
	}
	return l.Run(ctx, argv)
}
