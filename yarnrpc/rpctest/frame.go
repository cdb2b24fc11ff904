package rpctest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The frames of Hadoop IPC as this fake server reads and writes them.

// Wire constants of Hadoop IPC (see yarnrpc's frame.go; repeated here so this package does not
// import the client it tests).
const (
	authNone      = 0x00
	authSASL      = 0xDF
	callIDConnCtx = -3
	callIDPing    = -4
	callIDSASL    = -33
	maxFrame      = 64 << 20
)

func readFrame(r io.Reader) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > maxFrame {
		return nil, fmt.Errorf("request frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

func cut(b []byte) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("bad delimited message")
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

func frameOf(msgs ...proto.Message) []byte {
	b := make([]byte, 4, 64)
	for _, m := range msgs {
		b = protowire.AppendVarint(b, uint64(proto.Size(m)))
		b, _ = proto.MarshalOptions{AllowPartial: true}.MarshalAppend(b, m)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}
