// Package hadoop holds Hadoop's own names and address forms that every yarn-am process needs: the
// environment variables Hadoop's tools read (HADOOP_CONF_DIR, HADOOP_USER_NAME), the site files and the
// order Hadoop's Configuration loads them in, the host of a node address (NodeHost) and the address of
// a NameNode named by an hdfs:// URI (NameNodeAddr).
//
// They are Hadoop's contract, not yarn-am's, so they live below both the wire client (yarnrpc) and
// yarn-am's own contract (contract): the wire imports this leaf instead of climbing up to the
// packages built on it (docs/design.md#floors). The package imports only the standard library.
//
// Files: names.go (environment and site files), node.go (NodeHost), namenode.go (NameNodeAddr).
package hadoop
