package resources

import (
	"context"
	"fmt"
	"strings"
)

// Test-only drivers (names that no production package uses, so the gpu package can be linked in too).
func init() {
	_ = RegisterDriver("test-strict", func(resource string, params map[string]string) (Driver, error) {
		for k := range params {
			if k != "level" {
				return nil, fmt.Errorf("unknown parameter %q (only \"level\")", k)
			}
		}
		return nopDriver{}, nil
	})
}

type nopDriver struct{}

func (nopDriver) Discover(_ context.Context, amount int) ([]Info, error) {
	out := make([]Info, amount)
	for i := range out {
		out[i] = Info{"index": fmt.Sprint(i)}
	}
	return out, nil
}

// conf builds a Parse input from "key=value" lines; line i gets origin job.toml:i+1.
func conf(lines ...string) map[string]Value {
	kv := map[string]Value{}
	for i, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		kv[k] = Value{V: v, Origin: fmt.Sprintf("job.toml:%d", i+1)}
	}
	return kv
}
