// Package hadooppb holds yarn-am's own protobuf definitions of the Hadoop wire messages it speaks:
// RPC framing (RpcHeader, IpcConnectionContext, the protobuf engine's request header), common security
// messages (tokens, delegation-token calls), YARN records, the request/response messages of
// ApplicationClientProtocol, ApplicationMasterProtocol and ContainerManagementProtocol, and the YARN
// token identifiers.
//
// Field names, numbers, types, labels and defaults are Hadoop 3.4's; the proto packages
// (yarnam.hadoop.common, yarnam.hadoop.yarn) and file names (yarnam_*.proto) are ours, so this package
// and colinmarc/hdfs (which registers hadoop.common.* under Hadoop's file names) live in one binary
// without a registration conflict. Package names never go on the wire.
//
// The *.pb.go files are generated and committed: run `make protos` after editing a .proto (it installs
// protoc and protoc-gen-go into bin/tools; see gen.sh). conformance_test.go (build tag integration)
// compares every message, field and enum value here with the descriptors compiled into the Hadoop jars;
// internal/hadoopjar is the seam that reads those.
package hadooppb
