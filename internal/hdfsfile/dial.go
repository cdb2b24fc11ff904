package hdfsfile

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// DefaultNameNodePort is the NameNode's RPC port when an hdfs:// URI names none (Hadoop's
// fs.defaultFS default, hdfs://host:8020).
const DefaultNameNodePort = "8020"

// Dial is the one way yarn-am opens HDFS: colinmarc/hdfs's client with opts, whose NameNode and
// DataNode connections are set up within dialTimeout (the client takes no contexts: this bounds at
// least the set-up) and kept alive every 30 s. The client connects to a NameNode at once, so an
// unreachable or wrong one is Dial's error (TestDialURIOpensTheNameNodeItNames).
func Dial(opts hdfs.ClientOptions, dialTimeout time.Duration) (*hdfs.Client, error) {
	dial := (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	opts.NamenodeDialFunc, opts.DatanodeDialFunc = dial, dial
	return hdfs.NewClient(opts)
}

// DialURI opens, as user, the HDFS of an hdfs://host[:port]/... URI (DefaultNameNodePort when it
// names no port), by Dial, and returns the URI parsed. A URI that is not hdfs:// with a host is an
// error naming it.
func DialURI(uri, user string, dialTimeout time.Duration) (*hdfs.Client, *url.URL, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return nil, nil, fmt.Errorf("%.200q: want hdfs://host:port/...", uri)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), DefaultNameNodePort)
	}
	c, err := Dial(hdfs.ClientOptions{Addresses: []string{host}, User: user}, dialTimeout)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the NameNode %s: %w", host, err)
	}
	return c, u, nil
}
