package yarnrpc

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/text"
)

// Config is a Hadoop configuration: the properties of core-site.xml, hdfs-site.xml and yarn-site.xml
// over the defaults yarn-am relies on, with Hadoop's ${var} expansion applied on read.
type Config struct {
	props   map[string]string
	sources map[string]string // key → file it came from, for error messages
}

// Configuration files read by LoadConfig, later files overriding earlier ones (as Hadoop's
// Configuration loads core-site before yarn-site).
var configFiles = hadoop.ConfigFiles()

// Defaults from Hadoop's core-default.xml and yarn-default.xml that yarn-am reads.
var configDefaults = map[string]string{
	"hadoop.security.authentication":           "simple",
	"hadoop.rpc.protection":                    "authentication",
	"ipc.maximum.response.length":              "134217728",
	"ipc.client.connect.timeout":               "20000",
	"ipc.ping.interval":                        "60000",
	"ipc.client.connection.maxidletime":        "10000",
	"yarn.resourcemanager.hostname":            "0.0.0.0",
	"yarn.resourcemanager.address":             "${yarn.resourcemanager.hostname}:8032",
	"yarn.resourcemanager.scheduler.address":   "${yarn.resourcemanager.hostname}:8030",
	"yarn.resourcemanager.webapp.address":      "${yarn.resourcemanager.hostname}:8088",
	"yarn.resourcemanager.ha.enabled":          "false",
	"yarn.resourcemanager.connect.max-wait.ms": "900000",
}

// NewConfig returns a configuration with the defaults and then props.
func NewConfig(props map[string]string) *Config {
	c := &Config{props: map[string]string{}, sources: map[string]string{}}
	for k, v := range configDefaults {
		c.props[k] = v
		c.sources[k] = "default"
	}
	for k, v := range props {
		c.Set(k, v)
	}
	return c
}

// ConfigDirFromEnv returns HADOOP_CONF_DIR, else YARN_CONF_DIR, else "".
func ConfigDirFromEnv() string {
	for _, k := range []string{hadoop.EnvConfDir, "YARN_CONF_DIR"} {
		if d := os.Getenv(k); d != "" {
			return d
		}
	}
	return ""
}

// LoadConfigFromEnv loads the configuration from HADOOP_CONF_DIR, falling back to YARN_CONF_DIR for
// files HADOOP_CONF_DIR lacks. With neither set it returns the defaults and an error saying so.
func LoadConfigFromEnv() (*Config, error) {
	var dirs []string
	for _, k := range []string{hadoop.EnvConfDir, "YARN_CONF_DIR"} {
		if d := os.Getenv(k); d != "" {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return NewConfig(nil), errors.New("yarnrpc: neither HADOOP_CONF_DIR nor YARN_CONF_DIR is set; " +
			"set one to the directory holding core-site.xml and yarn-site.xml")
	}
	return LoadConfig(dirs...)
}

// MaxSiteFileBytes is the most yarn-am reads of one Hadoop site file (docs/running.md#limits-on-input-files):
// a full yarn-site.xml with every default is a few hundred KiB.
const MaxSiteFileBytes = 8 << 20

// LoadConfig reads core-site.xml, hdfs-site.xml and yarn-site.xml; for each file the first directory
// that has it wins. Missing files are fine; unreadable, malformed, oversized or non-regular ones (a
// named pipe, /dev/zero behind a symlink) are errors naming the file.
func LoadConfig(dirs ...string) (*Config, error) {
	c := NewConfig(nil)
	for _, name := range configFiles {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			data, err := boundedread.ReadFile("Hadoop configuration file", p, "Hadoop's "+name, MaxSiteFileBytes)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("yarnrpc: reading Hadoop configuration: %w", err)
			}
			if err := c.parseXML(p, data); err != nil {
				return nil, err
			}
			break
		}
	}
	return c, nil
}

// xmlProperty is one <property> of a Hadoop configuration file.
type xmlProperty struct {
	Name  string `xml:"name"`
	Value string `xml:"value"`
	Final string `xml:"final"`
}

// Bounds on xi:include, which Hadoop's Configuration follows (a site file that includes another is
// common where a cluster's addresses live in one shared file): how deep includes nest, and how many
// files one site file may pull in, so that a file including itself twice per level cannot make 2^N
// reads (TestConfigFollowsXInclude).
const (
	maxIncludeDepth = 8
	maxIncludeFiles = 32
)

// parseXML reads one site file's properties: the <property> children of its root element, and those
// of the files it includes with <xi:include href="..."/> (relative to the including file, as Hadoop
// resolves them), or, when an included file does not exist, of the include's <xi:fallback>. A missing
// include without a fallback is an error, as in Hadoop; so is an include of a URL that is not a file.
func (c *Config) parseXML(path string, data []byte) error {
	n := 0
	return c.parseXMLFile(path, data, []string{path}, &n)
}

func (c *Config) parseXMLFile(path string, data []byte, chain []string, files *int) error {
	d := xml.NewDecoder(strings.NewReader(string(data)))
	// includes is the state of each open xi:include: whether its file was missing (then its fallback,
	// if any, is read) and whether a fallback was seen.
	type include struct {
		href              string
		missing, fellBack bool
	}
	var includes []include
	var parents []string // local names of the open elements
	sawRoot := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("yarnrpc: %s is not a Hadoop configuration file: %w", path, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			parent := ""
			if len(parents) > 0 {
				parent = parents[len(parents)-1]
			}
			sawRoot = true
			switch {
			case t.Name.Local == "property" && (len(parents) == 1 || parent == "fallback"):
				var p xmlProperty
				if err := d.DecodeElement(&p, &t); err != nil {
					return fmt.Errorf("yarnrpc: %s is not a Hadoop configuration file: %w", path, err)
				}
				if name := strings.TrimSpace(p.Name); name != "" {
					c.props[name] = strings.TrimSpace(p.Value)
					c.sources[name] = path
				}
				continue
			case t.Name.Local == "include" && len(parents) > 0:
				inc := include{href: attr(t, "href")}
				missing, err := c.include(path, inc.href, chain, files)
				if err != nil {
					return err
				}
				inc.missing = missing
				includes = append(includes, inc)
			case t.Name.Local == "fallback" && parent == "include" && len(includes) > 0:
				inc := &includes[len(includes)-1]
				if !inc.missing {
					if err := d.Skip(); err != nil { // the included file was read: its fallback is not
						return fmt.Errorf("yarnrpc: %s is not a Hadoop configuration file: %w", path, err)
					}
					continue
				}
				inc.fellBack = true
			}
			parents = append(parents, t.Name.Local)
		case xml.EndElement:
			if len(parents) == 0 {
				continue
			}
			parents = parents[:len(parents)-1]
			if t.Name.Local == "include" && len(includes) > 0 {
				inc := includes[len(includes)-1]
				includes = includes[:len(includes)-1]
				if inc.missing && !inc.fellBack {
					return fmt.Errorf("yarnrpc: %s includes %s (xi:include), which does not exist, and gives no xi:fallback; Hadoop refuses this file too: fix the href or add <xi:fallback/>",
						path, text.Quote(inc.href))
				}
			}
		}
	}
	if !sawRoot {
		return fmt.Errorf("yarnrpc: %s is not a Hadoop configuration file: it has no <configuration> element", path)
	}
	return nil
}

// include reads the file an xi:include in path names, into c. It reports missing when the file does not
// exist (the include's fallback applies then).
func (c *Config) include(path, href string, chain []string, files *int) (missing bool, err error) {
	if strings.TrimSpace(href) == "" {
		return false, fmt.Errorf("yarnrpc: %s has an xi:include without href; give the file to include", path)
	}
	target := href
	if u, err := url.Parse(href); err == nil && u.Scheme != "" {
		if u.Scheme != "file" {
			return false, fmt.Errorf("yarnrpc: %s includes %s (xi:include): yarn-am follows includes of files only, not of %s URLs; copy the file next to %s and include it by name",
				path, text.Quote(href), text.Quote(u.Scheme), filepath.Base(path))
		}
		target = u.Path
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target) // relative to the including file, as Hadoop
	}
	if len(chain) > maxIncludeDepth {
		return false, fmt.Errorf("yarnrpc: %s: xi:include nested more than %d deep (%s); yarn-am follows at most %d levels",
			path, maxIncludeDepth, strings.Join(chain, " → "), maxIncludeDepth)
	}
	for _, p := range chain {
		if p == target {
			return false, fmt.Errorf("yarnrpc: %s includes %s, which includes it again (%s); remove the loop",
				path, target, strings.Join(append(chain, target), " → "))
		}
	}
	if *files++; *files > maxIncludeFiles {
		return false, fmt.Errorf("yarnrpc: %s: more than %d files pulled in by xi:include; yarn-am reads at most %d per site file", chain[0], maxIncludeFiles, maxIncludeFiles)
	}
	data, err := boundedread.ReadFile("Hadoop configuration file", target, "a Hadoop configuration file to include", MaxSiteFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("yarnrpc: %s includes %s: %w", path, target, err)
	}
	return false, c.parseXMLFile(target, data, append(chain[:len(chain):len(chain)], target), files)
}

// attr returns the value of the attribute named local (any namespace) of e.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// Set sets key to value (like -D on Hadoop's command line).
func (c *Config) Set(key, value string) {
	c.props[key] = value
	c.sources[key] = "set"
}

// Keys returns every key, sorted.
func (c *Config) Keys() []string {
	keys := make([]string, 0, len(c.props))
	for k := range c.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Source says where key's value came from: a file path, "default" or "set".
func (c *Config) Source(key string) string { return c.sources[key] }

// Hadoop's ${} expansion, with its bounds (TestConfigExpansionBounds): one reference is replaced at
// a time, at most maxSubst times; a reference whose value contains that same reference is left as
// written (Hadoop returns the unexpanded value then), and so is a value that needs more
// substitutions (a cycle such as a=${b}, b=${a}) or would grow beyond maxExpandedLen. Replacing one
// reference at a time keeps the growth linear: at most maxSubst raw values are inserted.
const (
	maxSubst       = 20      // Hadoop's Configuration.MAX_SUBST
	maxExpandedLen = 1 << 20 // bytes; far beyond any real Hadoop value
)

var varPattern = regexp.MustCompile(`\$\{([^${}\s]+)\}`)

// Get returns key's value with ${other.key} and ${env.NAME} expanded; unresolvable references stay
// as written, as in Hadoop. A value that cannot be expanded (see Lookup) is returned as written.
func (c *Config) Get(key string) (string, bool) {
	v, ok, _ := c.Lookup(key)
	return v, ok
}

// Lookup is Get with the reason a value could not be expanded: a reference to itself, a reference
// cycle or more than 20 nested references, or an expansion beyond 1 MiB. The error names the key
// and the file it came from; the value is then returned as written.
func (c *Config) Lookup(key string) (string, bool, error) {
	v, ok := c.props[key]
	if !ok {
		return "", false, nil
	}
	x, err := c.expand(v)
	if err != nil {
		return v, true, fmt.Errorf("yarnrpc: configuration %s=%q%s: %w; left unexpanded", key, v, c.from(key), err)
	}
	return x, true, nil
}

func (c *Config) expand(v string) (string, error) {
	from, n := 0, 0
	for {
		loc := varPattern.FindStringSubmatchIndex(v[from:])
		if loc == nil {
			return v, nil
		}
		start, end := from+loc[0], from+loc[1]
		ref, name := v[start:end], v[from+loc[2]:from+loc[3]]
		val, ok := c.lookupVar(name)
		if !ok { // unbound: stays as written
			from = end
			continue
		}
		if strings.Contains(val, ref) {
			return "", fmt.Errorf("%s refers to itself", ref)
		}
		if n == maxSubst {
			return "", fmt.Errorf("more than %d nested ${} substitutions (a reference cycle?)", maxSubst)
		}
		if len(v)-len(ref)+len(val) > maxExpandedLen {
			return "", fmt.Errorf("expanding %s would make the value longer than %d bytes", ref, maxExpandedLen)
		}
		v = v[:start] + val + v[end:]
		from = start // val may hold references of its own
		n++
	}
}

func (c *Config) lookupVar(name string) (string, bool) {
	if env, ok := strings.CutPrefix(name, "env."); ok {
		return os.LookupEnv(env)
	}
	r, ok := c.props[name]
	return r, ok
}

func (c *Config) from(key string) string {
	if src := c.sources[key]; src != "" {
		return " (from " + src + ")"
	}
	return ""
}

// GetString returns key's value, or def when unset.
func (c *Config) GetString(key, def string) string {
	if v, ok := c.Get(key); ok {
		return v
	}
	return def
}

// GetBool parses key as true/false (case-insensitive); def when unset.
func (c *Config) GetBool(key string, def bool) (bool, error) {
	v, ok, err := c.Lookup(key)
	if err != nil {
		return def, err
	}
	if !ok || v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, c.badValue(key, v, "true or false")
}

// GetInt parses key as a decimal integer; def when unset.
func (c *Config) GetInt(key string, def int64) (int64, error) {
	v, ok, err := c.Lookup(key)
	if err != nil {
		return def, err
	}
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def, c.badValue(key, v, "an integer")
	}
	return n, nil
}

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

var durationPattern = regexp.MustCompile(`^(-?\d+)\s*([a-zA-Z]*)$`)

// GetDuration parses key like Hadoop's getTimeDuration: a number with an optional unit suffix
// (ns, us, ms, s, m, h, d); a bare number is in unit. def when unset.
func (c *Config) GetDuration(key string, unit, def time.Duration) (time.Duration, error) {
	v, ok, err := c.Lookup(key)
	if err != nil {
		return def, err
	}
	if !ok || v == "" {
		return def, nil
	}
	m := durationPattern.FindStringSubmatch(v)
	if m == nil {
		return def, c.badValue(key, v, "a number with an optional unit ns, us, ms, s, m, h, d")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return def, c.badValue(key, v, "a number with an optional unit ns, us, ms, s, m, h, d")
	}
	u := unit
	if m[2] != "" {
		var ok bool
		if u, ok = durationUnits[strings.ToLower(m[2])]; !ok {
			return def, c.badValue(key, v, "a number with an optional unit ns, us, ms, s, m, h, d")
		}
	}
	return time.Duration(n) * u, nil
}

// GetStrings splits key's value at commas, trimming blanks and dropping empty items; nil when unset.
func (c *Config) GetStrings(key string) []string {
	v, ok := c.Get(key)
	if !ok {
		return nil
	}
	return splitList(v)
}

func (c *Config) badValue(key, value, want string) error {
	return fmt.Errorf("yarnrpc: configuration %s=%q%s: want %s", key, value, c.from(key), want)
}

// RMService selects which ResourceManager port RMAddresses returns.
type RMService int

const (
	// RMClient is the client port (yarn.resourcemanager.address, 8032): ApplicationClientProtocol.
	RMClient RMService = iota
	// RMScheduler is the scheduler port (yarn.resourcemanager.scheduler.address, 8030):
	// ApplicationMasterProtocol.
	RMScheduler
)

func (s RMService) key() (string, string) {
	if s == RMScheduler {
		return "yarn.resourcemanager.scheduler.address", "8030"
	}
	return "yarn.resourcemanager.address", "8032"
}

// RMEndpoints is RMAddresses with each address described for messages: its RM id with HA and
// where it came from (the key and its file, or the default because the key is unset).
func (c *Config) RMEndpoints(svc RMService) ([]Endpoint, error) {
	addrs, err := c.RMAddresses(svc)
	if err != nil {
		return nil, err
	}
	key, _ := svc.key()
	ha, _ := c.GetBool("yarn.resourcemanager.ha.enabled", false)
	if !ha {
		return []Endpoint{{Addr: addrs[0], Origin: c.addrOrigin(key, "yarn.resourcemanager.hostname", addrs[0])}}, nil
	}
	ids := c.GetStrings("yarn.resourcemanager.ha.rm-ids")
	out := make([]Endpoint, len(addrs))
	for i, a := range addrs {
		out[i] = Endpoint{Addr: a, ID: ids[i], Origin: c.addrOrigin(key+"."+ids[i], "yarn.resourcemanager.hostname."+ids[i], a)}
	}
	return out, nil
}

// addrOrigin says where the address a of key came from: key in its file, or the host key when
// key is unset, or the default.
func (c *Config) addrOrigin(key, hostKey, a string) string {
	if src := c.describeSource(key); src != "" {
		return src
	}
	if src := c.describeSource(hostKey); src != "" {
		return src + " (" + key + " is not set)"
	}
	return "the default " + a + ", because " + key + " is not set in any configuration file"
}

// describeSource reads "key in /etc/hadoop/yarn-site.xml", "key as set", or "" for keys from
// the defaults or unset.
func (c *Config) describeSource(key string) string {
	switch src := c.sources[key]; src {
	case "", "default":
		return ""
	case "set":
		return key + " as set"
	default:
		return key + " in " + src
	}
}

// RMAddresses returns the ResourceManager addresses of service, one per RM: with
// yarn.resourcemanager.ha.enabled, one for each id of yarn.resourcemanager.ha.rm-ids from
// <address key>.<id>, else from yarn.resourcemanager.hostname.<id> and the service's default port.
func (c *Config) RMAddresses(svc RMService) ([]string, error) {
	key, port := svc.key()
	ha, err := c.GetBool("yarn.resourcemanager.ha.enabled", false)
	if err != nil {
		return nil, err
	}
	if !ha {
		a, _, err := c.Lookup(key)
		if err != nil {
			return nil, err
		}
		if err := c.checkAddr(key, a); err != nil {
			return nil, err
		}
		return []string{a}, nil
	}
	ids := c.GetStrings("yarn.resourcemanager.ha.rm-ids")
	if len(ids) == 0 {
		v, _ := c.Get("yarn.resourcemanager.ha.rm-ids")
		return nil, fmt.Errorf("yarnrpc: yarn.resourcemanager.ha.enabled=true but yarn.resourcemanager.ha.rm-ids=%q; "+
			"want a comma list of RM ids such as rm1,rm2", v)
	}
	var out []string
	for _, id := range ids {
		k := key + "." + id
		a, ok, err := c.Lookup(k)
		if err != nil {
			return nil, err
		}
		if !ok || a == "" {
			hk := "yarn.resourcemanager.hostname." + id
			h, ok, err := c.Lookup(hk)
			if err != nil {
				return nil, err
			}
			if !ok || h == "" {
				return nil, fmt.Errorf("yarnrpc: RM id %q of yarn.resourcemanager.ha.rm-ids has neither %s nor %s set", id, k, hk)
			}
			a, k = net.JoinHostPort(h, port), hk
		}
		if err := c.checkAddr(k, a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (c *Config) checkAddr(key, a string) error {
	h, p, err := net.SplitHostPort(a)
	if err != nil || h == "" {
		return c.badValue(key, a, "host:port")
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		return c.badValue(key, a, "host:port with a port in 1..65535")
	}
	return nil
}

// Protection returns hadoop.rpc.protection (for ConnOptions.Protection), checked.
func (c *Config) Protection() (string, error) {
	v := c.GetString("hadoop.rpc.protection", "authentication")
	if _, err := protectionQOPs(v); err != nil {
		return "", c.badValue("hadoop.rpc.protection", v, "authentication, integrity or privacy (or a comma list)")
	}
	return v, nil
}

// SecurityEnabled reports whether hadoop.security.authentication is kerberos (false for simple).
func (c *Config) SecurityEnabled() (bool, error) {
	v := strings.ToLower(c.GetString("hadoop.security.authentication", "simple"))
	switch v {
	case "simple":
		return false, nil
	case "kerberos":
		return true, nil
	}
	return false, c.badValue("hadoop.security.authentication", v, "simple or kerberos")
}

// ConnDefaults returns ConnOptions filled from the ipc.* keys, hadoop.rpc.protection and
// hadoop.security.authentication; callers set Protocol and Auth.
func (c *Config) ConnDefaults() (ConnOptions, error) {
	var o ConnOptions
	var err error
	if o.Protection, err = c.Protection(); err != nil {
		return o, err
	}
	if o.ConnectTimeout, err = c.GetDuration("ipc.client.connect.timeout", time.Millisecond, DefaultConnectTimeout); err != nil {
		return o, err
	}
	if o.PingInterval, err = c.GetDuration("ipc.ping.interval", time.Millisecond, DefaultPingInterval); err != nil {
		return o, err
	}
	if o.MaxIdle, err = c.GetDuration("ipc.client.connection.maxidletime", time.Millisecond, DefaultMaxIdle); err != nil {
		return o, err
	}
	n, err := c.GetInt("ipc.maximum.response.length", DefaultMaxResponseLength)
	if err != nil {
		return o, err
	}
	if n <= 0 || n > 1<<31-1 {
		return o, c.badValue("ipc.maximum.response.length", strconv.FormatInt(n, 10), "a positive byte count below 2 GiB")
	}
	o.MaxResponseLength = int(n)
	if o.FallbackToSimpleAllowed, err = c.GetBool(KeyFallbackToSimpleAllowed, false); err != nil {
		return o, err
	}
	if o.WeakDigestCiphersAllowed, err = c.GetBool(KeyWeakDigestCiphersAllowed, false); err != nil {
		return o, err
	}
	secure, err := c.SecurityEnabled()
	if err != nil {
		return o, err
	}
	o.InsecureCluster = !secure
	return o, nil
}
