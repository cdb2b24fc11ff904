package hdfsfile

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDialURIOpensTheNameNodeItNames: DialURI refuses what is not an hdfs:// URI with a host, naming
// it; otherwise it connects at once to the NameNode at the URI's host and port (a listener there
// sees the connection), and a NameNode that is not there is its error, naming the address.
func TestDialURIOpensTheNameNodeItNames(t *testing.T) {
	for _, bad := range []string{"", "file:///tmp/x", "hdfs:///user/x", "hdfs://%zz/"} {
		_, _, err := DialURI(bad, "alice", time.Second)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want hdfs://host:port/", bad)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c // held open, unanswered, until the test ends
		}
	}()
	c, u, err := DialURI("hdfs://"+ln.Addr().String()+"/user/alice/.yarn-am/app", "alice", 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "/user/alice/.yarn-am/app", u.Path)
	select {
	case conn := <-accepted:
		conn.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("DialURI did not connect to the NameNode the URI names")
	}
	c.Close()

	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, _, err = DialURI("hdfs://"+addr+"/x", "alice", 5*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connecting to the NameNode "+addr)
}
