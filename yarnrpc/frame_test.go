package yarnrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

func TestRequestFrameLayout(t *testing.T) {
	clientID := bytes.Repeat([]byte{7}, 16)
	f, err := encodeFrame(requestHeader(5, clientID, 0),
		&hadooppb.RequestHeaderProto{MethodName: proto.String("m"), DeclaringClassProtocolName: proto.String("p"),
			ClientProtocolVersion: proto.Uint64(1)},
		userMsg("u"))
	require.NoError(t, err)
	require.Equal(t, uint32(len(f)-4), binary.BigEndian.Uint32(f))

	hb, rest, err := cutDelimited(f[4:])
	require.NoError(t, err)
	h := &hadooppb.RpcRequestHeaderProto{}
	require.NoError(t, proto.Unmarshal(hb, h))
	assert.Equal(t, int32(5), h.GetCallId())
	assert.Equal(t, clientID, h.GetClientId())
	assert.Equal(t, hadooppb.RpcKindProto_RPC_PROTOCOL_BUFFER, h.GetRpcKind())
	assert.Equal(t, int32(0), h.GetRetryCount())

	rhb, rest, err := cutDelimited(rest)
	require.NoError(t, err)
	rh := &hadooppb.RequestHeaderProto{}
	require.NoError(t, proto.Unmarshal(rhb, rh))
	assert.Equal(t, "m", rh.GetMethodName())

	body, rest, err := cutDelimited(rest)
	require.NoError(t, err)
	assert.Empty(t, rest)
	u := &hadooppb.UserInformationProto{}
	require.NoError(t, proto.Unmarshal(body, u))
	assert.Equal(t, "u", u.GetEffectiveUser())

	// Negative call ids are sint32 (zigzag) on the request side.
	ph, err := encodeFrame(requestHeader(callIDPing, clientID, -1))
	require.NoError(t, err)
	hb, _, _ = cutDelimited(ph[4:])
	require.NoError(t, proto.Unmarshal(hb, h))
	assert.Equal(t, int32(-4), h.GetCallId())
}

func responseFrame(t testing.TB, h *hadooppb.RpcResponseHeaderProto, body proto.Message) []byte {
	t.Helper()
	var msgs []proto.Message
	msgs = append(msgs, h)
	if body != nil {
		msgs = append(msgs, body)
	}
	f, err := encodeFrame(msgs...)
	require.NoError(t, err)
	return f
}

func TestDecodeResponse(t *testing.T) {
	// Call id -33 goes out as sint32 and comes back as uint32 4294967263.
	f := responseFrame(t, &hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(uint32(0xFFFFFFDF)),
		Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum()}, userMsg("v"))
	got, err := readFrame(bytes.NewReader(f), 1024)
	require.NoError(t, err)
	h, body, err := decodeResponse(got)
	require.NoError(t, err)
	assert.Equal(t, int32(callIDSASL), int32(h.GetCallId()))
	u := &hadooppb.UserInformationProto{}
	require.NoError(t, proto.Unmarshal(body, u))
	assert.Equal(t, "v", u.GetEffectiveUser())

	_, _, err = decodeResponse([]byte{0x05, 0x08})
	assert.Error(t, err, "delimited length past the frame")
	_, _, err = decodeResponse([]byte{0x00})
	assert.Error(t, err, "header without its required fields")
	_, _, err = decodeResponse([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	assert.Error(t, err, "overlong varint")
}

func TestReadFrameLimits(t *testing.T) {
	_, err := readFrame(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff}), DefaultMaxResponseLength)
	require.Error(t, err)
	assert.True(t, errors.Is(err, errFrameTooLarge))
	assert.Contains(t, err.Error(), "maximum 134217728")

	// A large announced frame with few bytes behind it: truncated, and not allocated up front.
	hostile := append([]byte{0x07, 0xff, 0xff, 0xff}, make([]byte, 100)...)
	allocs := testing.AllocsPerRun(5, func() {
		_, err = readFrame(bytes.NewReader(hostile), DefaultMaxResponseLength)
	})
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "got %v", err)
	assert.Less(t, allocs, 20.0)

	_, err = readFrame(bytes.NewReader([]byte{0, 0, 0, 3, 1}), 10)
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF))

	big := append(binary.BigEndian.AppendUint32(nil, 100000), make([]byte, 100000)...)
	got, err := readFrame(bytes.NewReader(big), DefaultMaxResponseLength)
	require.NoError(t, err)
	assert.Len(t, got, 100000)
}

// FuzzDecodeResponse: whatever the server sends, the decoder returns an error or a header, never
// panics, and never allocates what a length prefix claims beyond the bytes that actually arrive.
func FuzzDecodeResponse(f *testing.F) {
	ok, _ := encodeFrame(&hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(3),
		Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum()}, userMsg("hello"))
	f.Add(ok)
	errFrame, _ := encodeFrame(&hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(4),
		Status: hadooppb.RpcResponseHeaderProto_ERROR.Enum(), ExceptionClassName: proto.String("java.io.IOException"),
		ErrorMsg: proto.String("boom")})
	f.Add(errFrame)
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0x00, 0x10, 0x00, 0x00, 0x01})
	f.Add([]byte{0, 0, 0, 2, 0x05, 0x08})
	f.Add(protowire.AppendVarint([]byte{0, 0, 0, 10}, 1<<40))
	f.Fuzz(func(t *testing.T, data []byte) {
		frame, err := readFrame(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		if len(frame) > len(data) {
			t.Fatalf("frame of %d bytes from %d input bytes", len(frame), len(data))
		}
		h, body, err := decodeResponse(frame)
		if err != nil {
			return
		}
		if h == nil || len(body) > len(frame) {
			t.Fatalf("decoded %v with a %d byte body from a %d byte frame", h, len(body), len(frame))
		}
		_ = newRemoteError(h, "m").Error()
	})
}
