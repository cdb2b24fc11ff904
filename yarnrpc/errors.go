package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// This file is the one place where Hadoop's Java exceptions become Go errors. Callers test the result
// with errors.Is against the sentinels below, or errors.As with *RemoteError when they need the Java
// class name.

// Sentinels for remote exceptions. A *RemoteError matches the sentinel of its Java class (see
// remoteSentinels); connection-level failures match ErrConnection.
var (
	// ErrApplicationNotFound: the RM does not know the application (ApplicationNotFoundException).
	ErrApplicationNotFound = errors.New("application not found")
	// ErrApplicationAttemptNotFound: the RM does not know the attempt (ApplicationAttemptNotFoundException).
	ErrApplicationAttemptNotFound = errors.New("application attempt not found")
	// ErrInvalidResourceRequest: an ask exceeds the cluster maximum or is otherwise invalid
	// (InvalidResourceRequestException and its subclasses).
	ErrInvalidResourceRequest = errors.New("invalid resource request")
	// ErrResourceNotFound: an ask names a resource type the cluster does not define
	// (ResourceNotFoundException).
	ErrResourceNotFound = errors.New("resource type not found")
	// ErrApplicationMasterNotRegistered: the RM forgot the AM (RM restart or failover); register again
	// and re-send outstanding asks (ApplicationMasterNotRegisteredException).
	ErrApplicationMasterNotRegistered = errors.New("application master not registered")
	// ErrInvalidApplicationMasterRequest: e.g. registering twice or finishing unregistered
	// (InvalidApplicationMasterRequestException).
	ErrInvalidApplicationMasterRequest = errors.New("invalid application master request")
	// ErrContainerNotFound: an NM or RM does not know the container (ContainerNotFoundException).
	ErrContainerNotFound = errors.New("container not found")
	// ErrStandby: the server is a standby RM/NameNode; the call was not processed (StandbyException).
	ErrStandby = errors.New("server is in standby state")
	// ErrAccessControl: authentication or authorization failed (AccessControlException,
	// AuthorizationException, SaslException, SecretManager$InvalidToken, and local SASL failures).
	ErrAccessControl = errors.New("access denied")
	// ErrRetriable: the server asked to retry later and did not process the call (RetriableException,
	// ServerTooBusyException, NMNotYetReadyException).
	ErrRetriable = errors.New("server asked to retry")
	// ErrNoSuchMethod: the server does not implement the method or protocol (older Hadoop version).
	ErrNoSuchMethod = errors.New("method or protocol not supported by the server")
	// ErrConnection: the connection could not be opened or broke; see *ConnError.
	ErrConnection = errors.New("connection failed")
	// ErrClosed: the Conn or Client was closed by its owner.
	ErrClosed = errors.New("closed")
)

// remoteSentinels maps fully qualified Java exception class names to sentinels.
var remoteSentinels = map[string]error{
	"org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException":             ErrApplicationNotFound,
	"org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException":      ErrApplicationAttemptNotFound,
	"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException":          ErrInvalidResourceRequest,
	"org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException":     ErrInvalidResourceRequest,
	"org.apache.hadoop.yarn.exceptions.SchedulerInvalidResoureRequestException":  ErrInvalidResourceRequest,
	"org.apache.hadoop.yarn.exceptions.ResourceNotFoundException":                ErrResourceNotFound,
	"org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException":  ErrApplicationMasterNotRegistered,
	"org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException": ErrInvalidApplicationMasterRequest,
	"org.apache.hadoop.yarn.exceptions.ContainerNotFoundException":               ErrContainerNotFound,
	"org.apache.hadoop.ipc.StandbyException":                                     ErrStandby,
	"org.apache.hadoop.security.AccessControlException":                          ErrAccessControl,
	"org.apache.hadoop.security.authorize.AuthorizationException":                ErrAccessControl,
	"org.apache.hadoop.security.token.SecretManager$InvalidToken":                ErrAccessControl,
	"javax.security.sasl.SaslException":                                          ErrAccessControl,
	"org.apache.hadoop.ipc.RetriableException":                                   ErrRetriable,
	"org.apache.hadoop.ipc.ServerTooBusyException":                               ErrRetriable,
	"org.apache.hadoop.yarn.exceptions.NMNotYetReadyException":                   ErrRetriable,
	"org.apache.hadoop.ipc.RpcNoSuchMethodException":                             ErrNoSuchMethod,
	"org.apache.hadoop.ipc.RpcNoSuchProtocolException":                           ErrNoSuchMethod,
}

// RemoteError is an exception the server returned for a call (or for the connection, when Fatal).
type RemoteError struct {
	// Class is the fully qualified Java class name, e.g.
	// org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException.
	Class string
	// Message is the exception message without the Java stack trace.
	Message string
	// Code is Hadoop's RpcErrorCodeProto (0 when the server sent none).
	Code hadooppb.RpcResponseHeaderProto_RpcErrorCodeProto
	// Fatal is set when the server closed the connection after the error (status FATAL).
	Fatal bool
	// Method is the RPC method that failed, or "" for connection-level errors.
	Method string
}

// Error reads "ApplicationNotFoundException: Application with id ... doesn't exist in RM." (prefixed
// with the method when known): the short class name and the message, never a stack trace.
func (e *RemoteError) Error() string {
	s := e.ShortClass()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Method != "" {
		s = e.Method + ": " + s
	}
	return s
}

// ShortClass returns the class name without its package (and with inner classes kept:
// SecretManager$InvalidToken).
func (e *RemoteError) ShortClass() string {
	if e.Class == "" {
		return "RemoteException"
	}
	return e.Class[strings.LastIndexByte(e.Class, '.')+1:]
}

// Is makes errors.Is(err, ErrApplicationNotFound) etc. work; see remoteSentinels.
func (e *RemoteError) Is(target error) bool {
	if s, ok := remoteSentinels[e.Class]; ok && s == target {
		return true
	}
	switch e.Code {
	case hadooppb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD, hadooppb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL:
		return target == ErrNoSuchMethod
	case hadooppb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED:
		return target == ErrAccessControl
	}
	return false
}

// ResourceRejection is what the RM's refusal of an ask says about it: the resource type it blames and
// the scheduler's maximum allowed allocation, read from the exception's message (the RM sends no
// structured field for either). TestResourceRejectionOfRealMessages has the texts of Hadoop 3.1 to 3.4.
type ResourceRejection struct {
	// Type is the YARN resource type the message names: memory-mb, vcores, yarn.io/gpu, ...
	Type string
	// Maximum is the maximum allowed allocation the message prints, by YARN resource type (memory-mb,
	// vcores and every other type the RM knows; units, where a type has them, are dropped). It is nil
	// when the message prints none (a request below zero, an unknown type).
	Maximum map[string]int64
}

// MaximumOfType returns the maximum allowed allocation of Type; ok is false when the message did not
// print a maximum.
func (r ResourceRejection) MaximumOfType() (max int64, ok bool) {
	max, ok = r.Maximum[r.Type]
	return max, ok
}

var (
	// "requested resource type=[yarn.io/gpu] < 0 or greater than ..." (Hadoop 3.1, 3.2) and
	// "Requested resource type=[yarn.io/gpu], Requested resource=..." (3.3, 3.4).
	rejectedTypeRe = regexp.MustCompile(`[Rr]equested resource type=\[([^\]]+)\]`)
	// ResourceNotFoundException: "* Resource type requested: yarn.io/gpu".
	unknownTypeRe = regexp.MustCompile(`Resource type requested: ([^\s]+)`)
	// Resource.toString after "maximum allowed allocation=": <memory:8192, vCores:4, yarn.io/gpu: 4>.
	maxAllocationRe = regexp.MustCompile(`maximum allowed allocation=<([^>]*)>`)
)

// ResourceRejection reads the rejected resource type and the maximum allowed allocation from an
// InvalidResourceRequestException (or a subclass) or a ResourceNotFoundException. ok is false for
// other exceptions and for messages that name no resource type.
func (e *RemoteError) ResourceRejection() (r ResourceRejection, ok bool) {
	switch {
	case errors.Is(e, ErrInvalidResourceRequest):
		m := rejectedTypeRe.FindStringSubmatch(e.Message)
		if m == nil {
			return ResourceRejection{}, false
		}
		r.Type = m[1]
		if mm := maxAllocationRe.FindStringSubmatch(e.Message); mm != nil {
			r.Maximum = parseResourceString(mm[1])
			// Resource.toString leaves out the types whose amount is 0 (memory and vCores excepted),
			// and a type the RM does not know is a ResourceNotFoundException, not this one: a
			// named type missing from the maximum has a maximum of 0.
			if _, listed := r.Maximum[r.Type]; !listed {
				r.Maximum[r.Type] = 0
			}
		}
		return r, true
	case errors.Is(e, ErrResourceNotFound):
		m := unknownTypeRe.FindStringSubmatch(e.Message)
		if m == nil {
			return ResourceRejection{}, false
		}
		return ResourceRejection{Type: m[1]}, true
	}
	return ResourceRejection{}, false
}

// RejectedResource is ResourceRejection of the *RemoteError in err's chain.
func RejectedResource(err error) (ResourceRejection, bool) {
	var re *RemoteError
	if !errors.As(err, &re) {
		return ResourceRejection{}, false
	}
	return re.ResourceRejection()
}

// parseResourceString reads the inside of Resource.toString, "memory:8192, vCores:4, yarn.io/gpu: 4",
// into YARN resource types: memory → memory-mb, vCores → vcores; other names as printed. Parts that
// do not start with a number after the colon are left out.
func parseResourceString(s string) map[string]int64 {
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		digits := strings.TrimRightFunc(val, func(r rune) bool { return r < '0' || r > '9' }) // drop units
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || name == "" {
			continue
		}
		switch name {
		case "memory":
			name = "memory-mb"
		case "vCores":
			name = "vcores"
		}
		out[name] = n
	}
	return out
}

// newRemoteError builds a RemoteError from a response header with status ERROR or FATAL.
func newRemoteError(h *hadooppb.RpcResponseHeaderProto, method string) *RemoteError {
	return &RemoteError{
		Class:   h.GetExceptionClassName(),
		Message: cleanJavaMessage(h.GetExceptionClassName(), h.GetErrorMsg()),
		Code:    h.GetErrorDetail(),
		Fatal:   h.GetStatus() == hadooppb.RpcResponseHeaderProto_FATAL,
		Method:  method,
	}
}

// cleanJavaMessage strips what Hadoop adds around an exception message: the stack trace
// ("\n\tat ..." lines and "Caused by" chains) and a leading "<class>: " that stringified exceptions
// repeat.
func cleanJavaMessage(class, msg string) string {
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	kept := lines[:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "Caused by:") || strings.HasPrefix(t, "... ") {
			break
		}
		kept = append(kept, l)
	}
	out := strings.TrimSpace(strings.Join(kept, "\n"))
	if class != "" {
		out = strings.TrimPrefix(out, class+": ")
		if out == class {
			out = ""
		}
	}
	return out
}

// ContainerError is a NodeManager's refusal of one container in a call that succeeded as a whole
// (startContainers' failed_requests). Err is the refusal as a *RemoteError, so errors.Is with the
// sentinels and errors.As with *RemoteError work as for a failed call.
type ContainerError struct {
	// Container is the container id, container_....
	Container string
	// Err is the NodeManager's exception.
	Err *RemoteError
}

// Error reads "container_1_0001_01_000002: YarnException: <message>".
func (e *ContainerError) Error() string { return e.Container + ": " + e.Err.Error() }

// Unwrap returns the NodeManager's exception.
func (e *ContainerError) Unwrap() error { return e.Err }

// ContainerFailure is the *ContainerError of one failed_requests entry; the exception's cause chain
// is left out (its message usually repeats the cause's).
func ContainerFailure(f *hadooppb.ContainerExceptionMapProto) *ContainerError {
	ex := f.GetException()
	return &ContainerError{
		Container: FormatContainerID(f.GetContainerId()),
		Err:       &RemoteError{Class: ex.GetClassName(), Message: cleanJavaMessage(ex.GetClassName(), ex.GetMessage())},
	}
}

// ConnError is a failure of the connection to Addr rather than of one call: dial, handshake, a broken
// or closed connection, a malformed frame. It matches ErrConnection (and whatever Err matches).
type ConnError struct {
	// Addr is the server address (host:port).
	Addr string
	// Op says what failed: "dial", "handshake", "write", "read", "closed".
	Op string
	// Err is the cause.
	Err error
	// notSent is true when the failing request provably did not reach the server, so re-sending it is
	// safe whatever the method does.
	notSent bool
}

// Error reads "yarnrpc: dial rm1:8032: connection refused".
func (e *ConnError) Error() string {
	return fmt.Sprintf("yarnrpc: %s %s: %v", e.Op, e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// Is matches ErrConnection.
func (e *ConnError) Is(target error) bool { return target == ErrConnection }

// deadlineError reports that method on addr did not complete before ctx ended; it wraps ctx.Err()
// (context.DeadlineExceeded or context.Canceled).
func deadlineError(ctx context.Context, method, addr string) error {
	return fmt.Errorf("yarnrpc: %s on %s: no response: %w", method, addr, ctx.Err())
}

// notProcessed reports whether err proves the server did not process the call, so that re-sending
// it (to this or another server) cannot run it twice.
func notProcessed(err error) bool {
	var ce *ConnError
	if errors.As(err, &ce) && ce.notSent {
		return true
	}
	return errors.Is(err, ErrStandby) || errors.Is(err, ErrRetriable)
}
