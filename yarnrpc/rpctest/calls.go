package rpctest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// What the fake server does with one call: its handler, faults, and the exceptions it sends back.

// Handler answers one call. Returning an *Exception sends it as a remote exception; any other error
// is sent as java.io.IOException.
type Handler func(ctx context.Context, r *Request) (proto.Message, error)

// Request is one call as the server received it.
type Request struct {
	Protocol string
	Method   string
	CallID   int32
	Retry    int32
	Conn     ConnInfo
	body     []byte
}

// Decode unmarshals the request message into m.
func (r *Request) Decode(m proto.Message) error { return proto.Unmarshal(r.body, m) }

// Exception is a Java exception the server returns (status ERROR, or FATAL when Fatal is set, after
// which the server closes the connection).
type Exception struct {
	Class   string
	Message string
	Fatal   bool
}

// Error implements error.
func (e *Exception) Error() string { return e.Class + ": " + e.Message }

// StandbyException is what a standby RM answers.
func StandbyException() *Exception {
	return &Exception{Class: "org.apache.hadoop.ipc.StandbyException",
		Message: "Operation category WRITE is not supported in state standby"}
}

// Fault is what the server does to one call instead of (or before) answering it normally.
type Fault struct {
	// Delay waits before answering.
	Delay time.Duration
	// Drop never answers.
	Drop bool
	// Malformed answers with a frame whose header does not decode.
	Malformed bool
	// Oversize answers with a length prefix of 2 GiB-1 and no body.
	Oversize bool
	// CloseConn closes the connection instead of answering.
	CloseConn bool
	// Standby answers with StandbyException.
	Standby bool
	// Unwrapped answers normally but outside the security layer of an auth-int or auth-conf
	// connection, as an attacker on the path would inject a response.
	Unwrapped bool
}

func (c *serverConn) dispatch(h *hadooppb.RpcRequestHeaderProto, rest []byte) error {
	rhb, rest, err := cut(rest)
	if err != nil {
		return err
	}
	rh := &hadooppb.RequestHeaderProto{}
	if err := proto.Unmarshal(rhb, rh); err != nil {
		return err
	}
	body, _, err := cut(rest)
	if err != nil {
		return err
	}
	r := &Request{Protocol: rh.GetDeclaringClassProtocolName(), Method: rh.GetMethodName(),
		CallID: h.GetCallId(), Retry: h.GetRetryCount(), Conn: c.info, body: body}
	s := c.srv
	s.mu.Lock()
	s.calls[r.Method]++
	hd := s.handlers[[2]string{r.Protocol, r.Method}]
	faults := s.faults
	s.mu.Unlock()
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		var f Fault
		if faults != nil {
			f = faults(r)
		}
		c.answer(r, hd, f)
	}()
	return nil
}

func (c *serverConn) answer(r *Request, hd Handler, f Fault) {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-c.done:
			t.Stop()
			return
		}
	}
	switch {
	case f.CloseConn:
		c.close()
		return
	case f.Drop:
		return
	case f.Malformed:
		c.write([]byte{0, 0, 0, 5, 4, 0xff, 0xff, 0xff, 0xff})
		return
	case f.Oversize:
		c.write([]byte{0x7f, 0xff, 0xff, 0xff})
		return
	case f.Standby || c.srv.standby.Load():
		c.sendError(r.CallID, StandbyException())
		return
	}
	if hd == nil {
		c.sendErrorCode(r.CallID, &Exception{Class: "org.apache.hadoop.ipc.RpcNoSuchMethodException",
			Message: fmt.Sprintf("Unknown method %s called on %s protocol.", r.Method, r.Protocol)},
			hadooppb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := hd(ctx, r)
	cancel()
	if err != nil {
		var ex *Exception
		if !errors.As(err, &ex) {
			ex = &Exception{Class: "java.io.IOException", Message: err.Error()}
		}
		if ex.Fatal {
			c.sendFatal(r.CallID, ex)
			c.close()
			return
		}
		c.sendError(r.CallID, ex)
		return
	}
	h := &hadooppb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(r.CallID)),
		Status:              hadooppb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}
	frame := frameOf(h)
	if resp != nil {
		frame = frameOf(h, resp)
	}
	if f.Unwrapped {
		c.wmu.Lock()
		_, _ = c.nc.Write(frame)
		c.wmu.Unlock()
		return
	}
	c.write(frame)
}

func (c *serverConn) sendError(id int32, ex *Exception) {
	c.sendErrorCode(id, ex, hadooppb.RpcResponseHeaderProto_ERROR_APPLICATION)
}

func (c *serverConn) sendErrorCode(id int32, ex *Exception, code hadooppb.RpcResponseHeaderProto_RpcErrorCodeProto) {
	c.write(frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId:             proto.Uint32(uint32(id)),
		Status:             hadooppb.RpcResponseHeaderProto_ERROR.Enum(),
		ExceptionClassName: proto.String(ex.Class),
		// Hadoop sends the stack trace too; clients must strip it.
		ErrorMsg:            proto.String(ex.Class + ": " + ex.Message + "\n\tat org.example.Fake.call(Fake.java:1)"),
		ErrorDetail:         code.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}))
}

func (c *serverConn) sendFatal(id int32, ex *Exception) {
	c.write(frameOf(&hadooppb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(id)),
		Status:              hadooppb.RpcResponseHeaderProto_FATAL.Enum(),
		ExceptionClassName:  proto.String(ex.Class),
		ErrorMsg:            proto.String(ex.Message),
		ErrorDetail:         hadooppb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
	}))
}
