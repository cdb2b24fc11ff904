package gpu

import (
	"context"
	"errors"
)

// Release gives back the GPUs this process claimed in coordination mode, by running the built-in
// script's release mode (which takes the same lock as discovery and removes this process's claims).
// It is a no-op without coordination. A custom discovery-script.path has no release mode the driver
// knows of: its claims end when this process exits (the built-in scripts reclaim dead owners).
func (d *Driver) Release(ctx context.Context) error {
	d.mu.Lock()
	claims := d.claimed
	d.claimed = nil
	d.mu.Unlock()
	var errs []error
	for _, c := range claims {
		if err := d.runner.Release(ctx, c.script, c.args, d.cfg.Timeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// MarkSick records the GPU uuid as sick in the coordination directories of this process's coordinated
// discoveries, by running the built-in script's mark-sick mode: the node's discoveries (of every
// user and application) then skip it until it reads healthy
// (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service). It is a no-op without coordination.
func (d *Driver) MarkSick(ctx context.Context, uuid string) error {
	d.mu.Lock()
	claims := append([]claim(nil), d.claimed...)
	d.mu.Unlock()
	var errs []error
	for _, c := range claims {
		if err := d.runner.MarkSick(ctx, c.script, c.args, uuid, d.cfg.Timeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
