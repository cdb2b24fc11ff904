package resources

import (
	"fmt"

	"github.com/yarn-am/yarn-am/internal/text"
)

// Resource is one validated external resource of a TaskExecutor.
type Resource struct {
	Name          string            // [A-Za-z0-9_-]+
	Amount        int64             // > 0, per TaskExecutor
	YarnKey       string            // the YARN resource type, e.g. "yarn.io/gpu"
	KubernetesKey string            // accepted for compatibility with Flink configurations, unused on YARN
	Driver        string            // registered driver name or alias as written; "" = no driver (no infos)
	Params        map[string]string // the param.* subtree, keys without the "external-resource.<name>.param." prefix
}

// Config is the validated external-resource configuration of a job.
type Config struct {
	Resources []Resource // in the order of the external-resources key
}

// Resource returns the resource called name.
func (c *Config) Resource(name string) (Resource, bool) {
	for _, r := range c.Resources {
		if r.Name == name {
			return r, true
		}
	}
	return Resource{}, false
}

// Value is one configuration value together with where it came from, so errors can point at it.
type Value struct {
	V      string // the value as a string (TOML integers are formatted in decimal)
	Origin string // "file:line", "file" or "-D"
	// Key is the key as the user wrote it when it differs from the key this value is filed under (a
	// draft spelling such as external-resource.gpu.yarn.key); "" otherwise.
	Key string
}

// WarningLevel says how much a Warning matters.
type WarningLevel int

const (
	// LevelInfo is for facts a user may want to know (a key that is unused on YARN, a default chosen).
	LevelInfo WarningLevel = iota
	// LevelWarning is for things that work but should be changed (deprecated spellings, a resource
	// without driver).
	LevelWarning
)

// String returns "info" or "warning".
func (l WarningLevel) String() string {
	if l == LevelInfo {
		return "info"
	}
	return "warning"
}

// Warning is a non-fatal remark about the configuration.
type Warning struct {
	Level   WarningLevel
	Key     string // the key concerned, as written
	Value   string
	Origin  string
	Message string // complete sentence(s), already naming key and value
}

// String returns the message.
func (w Warning) String() string { return w.Message }

// Problem is one configuration error.
type Problem struct {
	Key     string // the offending key, as written
	Value   string // its value ("" when the key is missing)
	Origin  string // where the value came from ("" when the key is missing)
	Message string // the complete text a user sees: names key and value and says what is valid
}

// Error returns the message.
func (p Problem) Error() string { return p.Message }

// ConfigError lists every problem of a configuration, so a user fixes them all in one round.
type ConfigError struct {
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid external-resource configuration: " + e.Problems[0].Message
	}
	// At most text.MaxListed, as check lists a job file's: 20,001 bad -D overrides of a launcher
	// (YARN_AM_DEFINES) gave megabytes (TestBadInputs' "20,001" rows).
	return fmt.Sprintf("invalid external-resource configuration (%d problems):", len(e.Problems)) +
		text.Bullets(e.Messages(), "")
}

// Messages returns the message of every problem, in order.
func (e *ConfigError) Messages() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.Message
	}
	return out
}

// Parse validates a flat key/value configuration (keys as in docs/job-file.md, draft spellings accepted
// with a deprecation Warning) and returns the resources. Keys that do not start with
// "external-resource" are ignored. The error, if any, is a *ConfigError listing every problem found.
func Parse(kv map[string]Value) (*Config, []Warning, error) {
	norm, warns, probs := normalize(kv)
	cfg, w2, p2 := validate(norm)
	warns = append(warns, w2...)
	probs = append(probs, p2...)
	if len(probs) > 0 {
		return nil, warns, &ConfigError{Problems: probs}
	}
	return cfg, warns, nil
}

// Drivers builds the driver of every resource that has one, keyed by resource name. Resources without
// a driver are absent from the map. Each call builds fresh drivers.
func (c *Config) Drivers() (map[string]Driver, error) {
	out := map[string]Driver{}
	var probs []Problem
	for _, r := range c.Resources {
		if r.Driver == "" {
			continue
		}
		f, ok := LookupDriver(r.Driver)
		if !ok {
			probs = append(probs, Problem{Key: keyDriver(r.Name), Value: r.Driver,
				Message: fmt.Sprintf("%s = %q: unknown driver; registered drivers: %s", text.BoundArgs([]any{keyDriver(r.Name), r.Driver, registeredDriversText()})...)})
			continue
		}
		d, err := f(r.Name, copyParams(r.Params))
		if err != nil {
			probs = append(probs, Problem{Key: keyDriver(r.Name), Value: r.Driver,
				Message: fmt.Sprintf("external-resource.%s: driver %q rejected its parameters: %v", text.BoundArgs([]any{r.Name, r.Driver, err})...)})
			continue
		}
		out[r.Name] = d
	}
	if len(probs) > 0 {
		return nil, &ConfigError{Problems: probs}
	}
	return out, nil
}

func keyDriver(name string) string { return "external-resource." + name + ".driver-factory.class" }
