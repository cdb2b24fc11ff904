package gpu

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/resources"
)

// InfoIndex is the property of a GPU's resources.Info that holds its index (Flink's "index").
const InfoIndex = "index"

// Discover runs the discovery script for amount GPUs and returns one info per GPU, {"index": "<n>"}.
// The built-in script of the vendor is written out under WorkDir/.yarn-am first when no
// discovery-script.path is set. Fewer GPUs than amount, a failing script or a timeout is an error that
// carries the script's stderr.
func (d *Driver) Discover(ctx context.Context, amount int) ([]resources.Info, error) {
	if amount <= 0 {
		return nil, fmt.Errorf("gpu resource %q: amount %d is not positive", d.cfg.Resource, amount)
	}
	path := d.cfg.ScriptPath
	builtin := path == ""
	if builtin {
		var err error
		path, err = WriteBuiltinScript(filepath.Join(d.WorkDir, ScriptDir), d.cfg.Vendor)
		if err != nil {
			return nil, err
		}
	}
	log := logrus.WithFields(logrus.Fields{"resource": d.cfg.Resource, "script": path, "amount": amount})
	log.Debug("gpu: running discovery script")
	indexes, err := d.runner.Discover(ctx, path, amount, d.cfg.ScriptArgs, d.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	// Checked here too, whatever the runner: these strings become CUDA_VISIBLE_DEVICES.
	if msg := resources.CheckIDs(indexes, IndexRule); msg != "" {
		return nil, fmt.Errorf("gpu resource %q: discovery script %s printed %s: %s; valid output: %s",
			d.cfg.Resource, path, resources.QuoteOutput(strings.Join(indexes, ",")), msg, IndexRule.Describe)
	}
	if len(indexes) < amount {
		return nil, fmt.Errorf("discovery script %s found %d GPU(s) [%s], %d asked for", path, len(indexes), strings.Join(indexes, ","), amount)
	}
	indexes = indexes[:amount]
	if builtin {
		args, _ := resources.SplitArgs(d.cfg.ScriptArgs)
		if sa, err := CheckBuiltinScriptArgs(d.cfg.Resource, d.cfg.ScriptArgs, 0); err == nil && sa.Coordinate {
			d.mu.Lock()
			d.claimed = append(d.claimed, claim{script: path, args: args})
			d.mu.Unlock()
		}
	}
	log.WithField("indexes", strings.Join(indexes, ",")).Info("gpu: discovered")
	infos := make([]resources.Info, len(indexes))
	for i, idx := range indexes {
		infos[i] = resources.Info{InfoIndex: idx}
	}
	return infos, nil
}

// Env returns the visibility variable of the vendor (CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES) set to
// the comma-separated indexes of infos. The launcher does not override a variable the user set.
func (d *Driver) Env(infos []resources.Info) map[string]string {
	idx := make([]string, 0, len(infos))
	for _, in := range infos {
		if v, ok := in[InfoIndex]; ok {
			idx = append(idx, v)
		}
	}
	return map[string]string{d.cfg.Vendor.VisibilityVar(): strings.Join(idx, ",")}
}
