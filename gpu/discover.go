package gpu

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/resources"
)

// InfoIndex is the property of a GPU's resources.Info that holds its index (Flink's "index").
const InfoIndex = contract.InfoIndex

// InfoUUID is the property of a GPU's resources.Info that holds its UUID, when the vendor tool gave one.
const InfoUUID = contract.InfoUUID

// uuidRe is what a GPU UUID may look like (nvidia-smi: GPU-<hex groups>; rocm-smi: 0x<hex>).
var uuidRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}$`)

// Discover runs the discovery script for amount GPUs and returns one info per GPU,
// {"index": "<n>", "uuid": "<UUID>"} (no "uuid" where the script gave none). The built-in script of the
// vendor is written out under WorkDir/.yarn-am first when no discovery-script.path is set. Fewer GPUs
// than amount, a failing script, a timeout or a malformed "uuids=" line is an error that carries the
// script's stderr; what the script said on stderr when it succeeded is logged as warnings.
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
	found, err := d.runner.Discover(ctx, path, amount, d.cfg.ScriptArgs, d.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if builtin {
		// Recorded before the checks below: a script that claimed GPUs and then printed something wrong
		// still has its claims released.
		args, _ := resources.SplitArgs(d.cfg.ScriptArgs)
		if sa, err := CheckBuiltinScriptArgs(d.cfg.Resource, d.cfg.ScriptArgs, 0); err == nil && !sa.NoCoordinate {
			d.mu.Lock()
			d.claimed = append(d.claimed, claim{script: path, args: args})
			d.mu.Unlock()
		}
	}
	for _, n := range found.Notes {
		log.Warn("gpu: discovery script: " + n)
	}
	var topo *Topology
	if builtin && found.TopologyLine != "" {
		if t, err := ParseTopologyLine(found.TopologyLine); err != nil {
			log.Warn("gpu: discovery script: " + err.Error())
		} else {
			topo = &t
		}
	}
	d.mu.Lock()
	d.topology = topo
	d.mu.Unlock()
	indexes := found.Indexes
	// Checked here too, whatever the runner: these strings become CUDA_VISIBLE_DEVICES.
	if msg := resources.CheckIDs(indexes, IndexRule); msg != "" {
		return nil, fmt.Errorf("gpu resource %q: discovery script %s printed %s: %s; valid output: %s%s",
			d.cfg.Resource, path, resources.QuoteOutput(strings.Join(indexes, ",")), msg, IndexRule.Describe, resources.CRNote(strings.Join(indexes, ",")))
	}
	if len(indexes) < amount {
		return nil, fmt.Errorf("discovery script %s found %d GPU(s) [%s], %d asked for", path, len(indexes), strings.Join(indexes, ","), amount)
	}
	var uuids []string
	if found.HasUUIDs {
		uuids = strings.Split(found.UUIDLine, ",")
		bad := len(uuids) != len(indexes)
		seen := map[string]bool{}
		for i, u := range uuids {
			uuids[i] = strings.TrimSpace(u)
			if u = uuids[i]; u != "" && (!uuidRe.MatchString(u) || seen[u]) {
				bad = true
			}
			seen[u] = true
		}
		if bad {
			return nil, fmt.Errorf("gpu resource %q: discovery script %s printed %s after the indexes %s: want one distinct UUID (letters, digits, _ . : -, at most 96) or nothing per index, comma-separated, e.g. %sGPU-3f5b2c1e-9a7d-4e0b-8c61-2d4f6a8b0c9e,%s",
				d.cfg.Resource, path, resources.QuoteOutput(UUIDLinePrefix+found.UUIDLine), resources.QuoteOutput(strings.Join(indexes, ",")), UUIDLinePrefix, resources.CRNote(found.UUIDLine))
		}
	}
	indexes = indexes[:amount]
	infos := make([]resources.Info, len(indexes))
	for i, idx := range indexes {
		infos[i] = resources.Info{InfoIndex: idx}
		if i < len(uuids) && uuids[i] != "" {
			infos[i][InfoUUID] = uuids[i]
		}
	}
	fields := logrus.Fields{"indexes": strings.Join(indexes, ",")}
	if len(uuids) > 0 {
		fields["uuids"] = strings.Join(contract.UUIDs(infos), ",")
	}
	if topo != nil {
		fields["link"] = topo.Link // the worst link between two of the GPUs (docs/gpus.md#topology-connected-sets)
	}
	log.WithFields(fields).Info("gpu: discovered")
	return infos, nil
}

// Topology returns the GPU topology the built-in script read in the last discovery (nil when it read
// none: one GPU, --topology any, a custom script, or a matrix it could not read).
func (d *Driver) Topology() *Topology {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.topology
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
