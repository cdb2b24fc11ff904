package hdfsfile

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDialURIOpensTheNameNodeItNames: DialURI refuses what is not an hdfs:// URI with a host, naming
// it, and otherwise connects to the NameNode at the URI's host and port at once (a listener here,
// which is no NameNode, sees the connection, and the error names the address).
func TestDialURIOpensTheNameNodeItNames(t *testing.T) {
	for _, bad := range []string{"", "file:///tmp/x", "hdfs:///user/x", "hdfs://%zz/"} {
		_, _, err := DialURI(bad, "alice", time.Second)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want hdfs://host:port/", bad)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan struct{})
	go func() {
		if c, err := ln.Accept(); err == nil {
			close(accepted)
			c.Close() // not a NameNode: the call fails, after it reached here
		}
	}()
	_, _, err = DialURI("hdfs://"+ln.Addr().String()+"/user/alice/.yarn-am/app", "alice", 5*time.Second)
	require.Error(t, err, "not a NameNode")
	assert.Contains(t, err.Error(), "connecting to the NameNode "+ln.Addr().String())
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not connect to the NameNode the URI names")
	}
}
