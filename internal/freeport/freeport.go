// Package freeport picks TCP ports that another process binds later: the Flink JobManager's RPC and
// REST ports (the AM picks them, the JobManager binds them) and a gang's rendezvous port (rank 0's
// launcher picks it, the framework binds it).
//
// A port from listening on port 0 is in the kernel's ephemeral range, the range every outgoing
// connection on the node takes its local port from: between the pick and the bind any connect() may
// take it, and the server fails with "address already in use" (a Flink JobManager did in make bench,
// while its TaskManagers connected out). So the ports are picked below that range, where the kernel
// never hands out a port by itself; each is checked free by listening on it.
//
// The check listens on the wildcard address, not on the node's own: the JobManager and rank 0's
// framework bind the wildcard, which fails while ANY local address holds the port (another user's
// server on 127.0.0.1 or on a second interface), and a check on one address would not see those
// (TestPickSkipsAPortHeldOnAnyLocalAddress).
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Floor is the lowest port picked; ports from Floor up to the ephemeral range's start are used.
const Floor = 10000

// minSpan is the least room below the ephemeral range worth picking from; with less (a node whose
// ephemeral range starts low) ports come from port 0 as before.
const minSpan = 1000

// rangeFile is Linux's ephemeral port range, "low high".
var rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// ephemeralLow is the start of the kernel's ephemeral range (32768 when it cannot be read: Linux's
// default).
func ephemeralLow() int {
	f, err := os.Open(rangeFile)
	if err != nil {
		return 32768
	}
	defer f.Close()
	buf := make([]byte, 64) // "32768\t60999\n": one bounded read
	n, _ := f.Read(buf)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 1 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low < 1 || low > 65535 {
		return 32768
	}
	return low
}

// wildcard is the address the checks listen on: every local address at once (Go listens dual-stack
// on "" where the node has IPv6).
const wildcard = ""

// startAt picks where the scan below the ephemeral range starts (a variable for tests).
var startAt = rand.IntN

// Pick returns n distinct TCP ports free on every local address of the node whose name is host (host
// only names the node in errors: the ports are checked on the wildcard address, which the servers
// bind), below the ephemeral range when it leaves room. The ports are listened on together, then all
// released, so they are distinct and were free a moment ago.
func Pick(host string, n int) ([]int, error) {
	low := ephemeralLow()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	var out []int
	if low-Floor >= minSpan {
		span := low - Floor
		start := startAt(span)
		for i := 0; i < span && len(out) < n; i++ {
			p := Floor + (start+i)%span
			l, err := net.Listen("tcp", net.JoinHostPort(wildcard, strconv.Itoa(p)))
			if err != nil {
				continue // in use, or not ours to bind
			}
			held = append(held, l)
			out = append(out, p)
		}
	}
	for len(out) < n { // no room below the ephemeral range (or all of it taken): the kernel's pick
		l, err := net.Listen("tcp", net.JoinHostPort(wildcard, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port on %s: %w", host, err)
		}
		held = append(held, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
