// Package hdfsfile is yarn-am's one way to open HDFS (Dial, DialURI: the submitting client's staging,
// the AM's staging directory, a framework's uploads) and what every writer of an HDFS file needs
// beyond the HDFS client: closing a file the NameNode completes only once its last block has enough
// replicas.
package hdfsfile

import (
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// closeBound is how long Close retries while the NameNode waits for the last block's replicas.
const closeBound = 30 * time.Second

// Close closes w, retrying with backoff (50 ms doubling to 1 s, for at most 30 s) while the NameNode
// reports ErrReplicating: it completes a file only once its last block has enough replicas, and
// Hadoop's own client retries the same way.
func Close(w *hdfs.FileWriter) error {
	delay := 50 * time.Millisecond
	for deadline := time.Now().Add(closeBound); ; {
		err := w.Close()
		if err == nil || !hdfs.IsErrReplicating(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		if delay < time.Second {
			delay *= 2
		}
	}
}
