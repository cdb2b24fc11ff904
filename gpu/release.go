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
