package yarnrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Hadoop IPC framing: every message after the 7-byte preamble is a frame of a 4-byte big-endian length
// followed by varint-delimited protobuf messages (request: RpcRequestHeaderProto, RequestHeaderProto,
// the request; response: RpcResponseHeaderProto, then the response on success).

const (
	rpcVersion       = 9
	authProtoNone    = 0x00
	authProtoSASL    = 0xDF // -33 as a byte
	callIDConnCtx    = -3
	callIDPing       = -4
	callIDSASL       = -33
	serviceClassNone = 0

	// DefaultMaxResponseLength is the largest response frame accepted unless ConnOptions says
	// otherwise: 128 MiB, like Hadoop's ipc.maximum.response.length.
	DefaultMaxResponseLength = 128 << 20

	// directReadLimit is the largest frame read into a buffer of the announced size at once; larger
	// frames grow as their bytes arrive, so a hostile length prefix costs no memory by itself.
	directReadLimit = 64 << 10
)

// errFrameTooLarge is wrapped by readFrame when a length prefix exceeds the maximum.
var errFrameTooLarge = errors.New("frame exceeds the maximum response length")

var preambleHead = []byte{'h', 'r', 'p', 'c', rpcVersion, serviceClassNone}

// appendDelimited appends m's size as a varint and then m.
func appendDelimited(b []byte, m proto.Message) ([]byte, error) {
	b = protowire.AppendVarint(b, uint64(proto.Size(m)))
	return proto.MarshalOptions{}.MarshalAppend(b, m)
}

// encodeFrame returns the length-prefixed frame of msgs, each varint-delimited.
func encodeFrame(msgs ...proto.Message) ([]byte, error) {
	n := 4
	for _, m := range msgs {
		n += proto.Size(m) + binary.MaxVarintLen32
	}
	b := make([]byte, 4, n)
	for _, m := range msgs {
		var err error
		if b, err = appendDelimited(b, m); err != nil {
			return nil, fmt.Errorf("yarnrpc: encoding %T: %w", m, err)
		}
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// requestHeader returns the RpcRequestHeaderProto of a call.
func requestHeader(callID int32, clientID []byte, retry int32) *hadooppb.RpcRequestHeaderProto {
	return &hadooppb.RpcRequestHeaderProto{
		RpcKind:    hadooppb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:      hadooppb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:     proto.Int32(callID),
		ClientId:   clientID,
		RetryCount: proto.Int32(retry),
	}
}

// readFrame reads one length-prefixed frame, refusing lengths above max before allocating them.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, err
	}
	if string(lb[:]) == "HTTP" { // "HTTP/1.1 400 ...": a web server's answer to our preamble
		return nil, ErrHTTPServer
	}
	n := binary.BigEndian.Uint32(lb[:])
	if int64(n) > int64(max) {
		return nil, fmt.Errorf("%w: length prefix %d, maximum %d (ipc.maximum.response.length)", errFrameTooLarge, n, max)
	}
	if n <= directReadLimit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpectedEOF(err)
		}
		return buf, nil
	}
	var buf bytes.Buffer
	buf.Grow(directReadLimit)
	got, err := buf.ReadFrom(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, err
	}
	if got != int64(n) {
		return nil, fmt.Errorf("frame truncated after %d of %d bytes: %w", got, n, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeResponse splits a response frame into its header and the bytes of the response message
// (without the delimiting varint; nil when the frame has none).
func decodeResponse(frame []byte) (*hadooppb.RpcResponseHeaderProto, []byte, error) {
	hb, rest, err := cutDelimited(frame)
	if err != nil {
		return nil, nil, fmt.Errorf("response header: %w", err)
	}
	h := &hadooppb.RpcResponseHeaderProto{}
	if err := proto.Unmarshal(hb, h); err != nil {
		return nil, nil, fmt.Errorf("response header: %w", err)
	}
	if len(rest) == 0 {
		return h, nil, nil
	}
	body, _, err := cutDelimited(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("response body of call %d: %w", int32(h.GetCallId()), err)
	}
	return h, body, nil
}

// cutDelimited returns the varint-delimited message at the start of b and what follows it.
func cutDelimited(b []byte) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 {
		return nil, nil, fmt.Errorf("bad length varint: %w", protowire.ParseError(k))
	}
	if n > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("delimited length %d exceeds the %d bytes left in the frame", n, len(b)-k)
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}
