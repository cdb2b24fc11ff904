package yarnrpc

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// After a SASL handshake that negotiated auth-int or auth-conf, Hadoop's IPC carries a protected
// byte stream in each direction: the client wraps the bytes of its frames (length prefix included)
// and sends each wrapped piece as a frame of its own with call id -33 and an RpcSaslProto of state
// WRAP; the server does the same with its responses, one WRAP message per response frame. Either
// side reassembles the unwrapped bytes into frames, so a frame may span WRAP messages and a WRAP
// message may hold several frames.

// wrapFrames returns the WRAP frames that carry frame (a whole length-prefixed frame).
func wrapFrames(m mechanism, frame []byte) ([]byte, error) {
	chunk := m.maxWrap()
	if chunk <= 0 {
		chunk = len(frame)
	}
	var out []byte
	for len(frame) > 0 {
		n := min(chunk, len(frame))
		tok, err := m.wrap(frame[:n])
		if err != nil {
			return nil, fmt.Errorf("SASL %s wrap: %w", m.name(), err)
		}
		f, err := encodeFrame(requestHeader(callIDSASL, []byte{}, -1),
			&hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_WRAP.Enum(), Token: nonNil(tok)})
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
		frame = frame[n:]
	}
	return out, nil
}

// errUnwrapped is the fatal error of a frame that is not a WRAP message on a connection whose QOP
// protects traffic: only the security layer proves a response came from the server, so anything
// outside it may have been injected by whoever is on the path (TestUnwrappedFrameIsFatal). Hadoop's
// server wraps its FATAL answers too, so no genuine frame is lost by refusing them.
var errUnwrapped = errors.New("an unwrapped frame arrived on a connection with integrity/privacy")

// unwrapReader turns the server's WRAP messages back into the byte stream of its response frames.
// Any other frame is an error (errUnwrapped), which closes the connection.
type unwrapReader struct {
	r        io.Reader
	mech     mechanism
	maxFrame int
	buf      []byte
}

func (u *unwrapReader) Read(p []byte) (int, error) {
	for len(u.buf) == 0 {
		frame, err := readFrame(u.r, u.maxFrame)
		if err != nil {
			return 0, err
		}
		h, body, err := decodeResponse(frame)
		if err != nil {
			return 0, fmt.Errorf("malformed response: %w", err)
		}
		if id := int32(h.GetCallId()); id != callIDSASL || h.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS {
			return 0, fmt.Errorf("%w (QOP %s; call id %d, status %v): refusing it and closing the connection",
				errUnwrapped, u.mech.qop(), id, h.GetStatus())
		}
		m := &hadooppb.RpcSaslProto{}
		if err := proto.Unmarshal(body, m); err != nil {
			return 0, fmt.Errorf("SASL message from the server: %w", err)
		}
		if m.GetState() != hadooppb.RpcSaslProto_WRAP {
			return 0, fmt.Errorf("SASL: server sent %v where only WRAP messages may come (QOP %s)", m.GetState(), u.mech.qop())
		}
		if u.buf, err = u.mech.unwrap(m.GetToken()); err != nil {
			return 0, fmt.Errorf("SASL %s unwrap: %w", u.mech.name(), err)
		}
	}
	n := copy(p, u.buf)
	u.buf = u.buf[n:]
	return n, nil
}
