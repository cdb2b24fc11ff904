package hadoop

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// NameNodeAddr returns host:port of an hdfs:// URI (port 8020 when it has none).
func NameNodeAddr(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not a NameNode URI like hdfs://host:8020", uri)
	}
	port := u.Port()
	if port == "" {
		port = "8020"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q: port %s is not a TCP port (1-65535)", uri, port)
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
