package flink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/text"
)

// The JobManager's ports a job may name (docs/flink.md#addresses): its JVM binds them (0, Flink's
// "any free port", unless the job names its own; bound.go), so a value Flink cannot bind would fail
// the JobManager's start in the cluster, after the staging, with a Java stack trace. check refuses
// it first, naming the key (docs/flink.md#what-check-refuses).
const (
	keyRPCPort      = "jobmanager.rpc.port"
	keyRESTPort     = "rest.port"
	keyRESTBindPort = "rest.bind-port"
)

// portValid is what a single-port key takes, for messages.
const portValid = "a port number from 0 (any free port) to 65535"

// bindPortValid is what rest.bind-port takes (Flink's port list: NetUtils' ranges), for messages.
const bindPortValid = "a port from 0 (any free port) to 65535, a range such as 50100-50200, or a comma-separated list of them"

// checkPorts refuses a value of the JobManager's port keys in the job's own keys (conf: the job
// file's and -D, which jobPorts hands the JVM; the home's are replaced) that Flink could not bind:
// one port for jobmanager.rpc.port and rest.port (Flink reads them as integers), a port, a range or
// a list of them for rest.bind-port. from says where a key was set (layered.from); nil: nowhere to
// say.
func checkPorts(conf *flinkdist.Config, from func(string) string) error {
	if from == nil {
		from = func(string) string { return "" }
	}
	var errs []error
	for _, k := range []string{keyRPCPort, keyRESTPort} {
		if v, ok := conf.Get(k); ok {
			if _, err := parsePort(v); err != nil {
				errs = append(errs, fmt.Errorf("%s = %s%s: %v; want %s", k, text.Quote(v), from(k), err, portValid))
			}
		}
	}
	if v, ok := conf.Get(keyRESTBindPort); ok {
		if err := checkPortList(v); err != nil {
			errs = append(errs, fmt.Errorf("%s = %s%s: %v; want %s", keyRESTBindPort, text.Quote(v), from(keyRESTBindPort), err, bindPortValid))
		}
	}
	return errors.Join(errs...)
}

// parsePort reads one port: decimal digits (spaces around them allowed, as Flink trims), 0 to 65535.
func parsePort(v string) (int, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, errors.New("not a whole number")
		}
	}
	if len(s) > 5 {
		return 0, errors.New("out of range")
	}
	n, _ := strconv.Atoi(s)
	if n > 65535 {
		return 0, errors.New("out of range")
	}
	return n, nil
}

// maxPortListItems bounds the items of a rest.bind-port list that are read.
const maxPortListItems = 1024

// checkPortList reads rest.bind-port: items separated by commas, each a port or a range
// "first-last" with first <= last.
func checkPortList(v string) error {
	items := strings.Split(v, ",")
	if len(items) > maxPortListItems {
		return fmt.Errorf("more than %d items", maxPortListItems)
	}
	for _, item := range items {
		first, last, isRange := strings.Cut(item, "-")
		a, err := parsePort(first)
		if err != nil {
			return fmt.Errorf("item %s: %v", text.Quote(strings.TrimSpace(item)), err)
		}
		if !isRange {
			continue
		}
		b, err := parsePort(last)
		if err != nil {
			return fmt.Errorf("item %s: %v", text.Quote(strings.TrimSpace(item)), err)
		}
		if a > b {
			return fmt.Errorf("item %s: the range ends below its start", text.Quote(strings.TrimSpace(item)))
		}
	}
	return nil
}
