package hadoop

import (
	"net"
	"strings"
)

// NodeHost is the host of a node address as YARN and the AM write them: "host:port" gives host,
// "[::1]:8041" gives ::1 (no brackets, as NodeIdProto's host and net.IP print it), and an address
// without a port ("host", "::1", "[::1]") gives itself without brackets. Every process that needs
// the host of an address uses this one (TestNodeHost).
func NodeHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	if strings.HasPrefix(addr, "[") && strings.HasSuffix(addr, "]") {
		return addr[1 : len(addr)-1]
	}
	return addr
}
