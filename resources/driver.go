package resources

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/yarn-am/yarn-am/contract"
)

// Info is what a worker learns about one device of an external resource: a map of properties with
// Keys and Property (Flink's ExternalResourceInfo). It is defined with the other documents the
// launcher, the AM and drivers share, in package contract.
type Info = contract.Info

// Driver discovers the devices of one external resource inside a container.
type Driver interface {
	// Discover returns exactly amount infos, or an error that says why it could not (the script's
	// stderr, a timeout, too few devices). It must not return fewer infos than amount without an error.
	Discover(ctx context.Context, amount int) ([]Info, error)
}

// Releaser is implemented by drivers that hold claims on devices (GPU coordination mode): the launcher
// calls Release once the worker has exited.
type Releaser interface {
	Release(ctx context.Context) error
}

// EnvProvider is implemented by drivers that set extra environment variables for the worker
// (CUDA_VISIBLE_DEVICES for NVIDIA GPUs). The launcher does not override variables the user already set.
type EnvProvider interface {
	Env(infos []Info) map[string]string
}

// DriverFactory builds a driver from the resource's name and its param.* subtree (keys without the
// "external-resource.<name>.param." prefix).
type DriverFactory func(resourceName string, params map[string]string) (Driver, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]DriverFactory{}
	aliases   = map[string]string{}
)

// RegisterDriver makes a driver available under name (the value of
// external-resource.<name>.driver-factory.class). Registering a name twice returns an error.
func RegisterDriver(name string, f DriverFactory) error {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[name]; dup {
		return fmt.Errorf("resources: driver %q registered twice", name)
	}
	drivers[name] = f
	return nil
}

// RegisterAlias makes alias select the driver registered as name (Flink's factory class names).
func RegisterAlias(alias, name string) {
	driversMu.Lock()
	defer driversMu.Unlock()
	aliases[alias] = name
}

// LookupDriver returns the factory registered under name or one of its aliases.
func LookupDriver(name string) (DriverFactory, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	if real, ok := aliases[name]; ok {
		name = real
	}
	f, ok := drivers[name]
	return f, ok
}

// RegisteredDrivers lists the registered driver names and aliases, sorted, for error messages.
func RegisteredDrivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	var names []string
	for n := range drivers {
		names = append(names, n)
	}
	for a := range aliases {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}

func registeredDriversText() string { return strings.Join(RegisteredDrivers(), ", ") }
