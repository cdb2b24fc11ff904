package yarnrpc

import (
	"context"
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// ApplicationMasterProtocol is the protocol name of the RM's scheduler port.
const ApplicationMasterProtocol = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"

// AMRMTokenKind is the kind of the AM-RM token in the AM's token file.
const AMRMTokenKind = "YARN_AM_RM_TOKEN"

// applicationMasterIdempotent: registering again is answered like the first registration by an RM
// that already knows the attempt (or with an error the caller handles), and allocate carries a
// response_id that lets the RM answer a repeated request with its last response instead of running it
// twice. finishApplicationMaster only moves the attempt towards FINISHED, so repeating it is harmless.
var applicationMasterIdempotent = []string{"registerApplicationMaster", "allocate", "finishApplicationMaster"}

// AMClient is a typed client of the ResourceManager's ApplicationMasterProtocol (the port of
// yarn.resourcemanager.scheduler.address), authenticated with the AM-RM token and failing over across
// the configured RMs. It is safe for concurrent use, though an AM normally calls it from one loop.
type AMClient struct {
	rpc     *Client
	service string
	user    string
}

// NewAMClient builds a client for the scheduler addresses of conf, authenticated with the AM-RM token
// tok (its Service is set to the scheduler address(es), as Hadoop does). user is the application's
// user, used only if a server switches the connection to SIMPLE.
func NewAMClient(conf *Config, tok Token, user string) (*AMClient, error) {
	addrs, err := conf.RMAddresses(RMScheduler)
	if err != nil {
		return nil, err
	}
	co, err := conf.ConnDefaults()
	if err != nil {
		return nil, err
	}
	return NewAMClientAt(addrs, co, tok, user)
}

// NewAMClientAt is NewAMClient with explicit scheduler addresses and connection options (tests, and
// callers that already hold a Config's ConnDefaults).
func NewAMClientAt(addrs []string, co ConnOptions, tok Token, user string) (*AMClient, error) {
	if tok.Kind != "" && tok.Kind != AMRMTokenKind {
		return nil, fmt.Errorf("yarnrpc: AM-RM token has kind %q; want %s", tok.Kind, AMRMTokenKind)
	}
	service := strings.Join(addrs, ",")
	tok.Service = service
	co.Protocol = ApplicationMasterProtocol
	co.Auth = TokenAuth(tok, user)
	c, err := NewClient(ClientOptions{Addresses: addrs, ConnOptions: co, IdempotentMethods: applicationMasterIdempotent})
	if err != nil {
		return nil, err
	}
	return &AMClient{rpc: c, service: service, user: user}, nil
}

// SetToken replaces the AM-RM token for new connections (the RM rolls the token and sends the new
// one in an allocate response); the service is set to the scheduler address(es).
func (a *AMClient) SetToken(tok Token) error {
	tok.Service = a.service
	if tok.Kind == "" {
		tok.Kind = AMRMTokenKind
	}
	return a.rpc.SetAuth(TokenAuth(tok, a.user))
}

// Close closes the client's connections.
func (a *AMClient) Close() error { return a.rpc.Close() }

// Active returns the scheduler address calls currently go to.
func (a *AMClient) Active() string { return a.rpc.Active() }

// Register registers the ApplicationMaster (host, rpc port and tracking URL in req). Registering an
// attempt twice fails with an error matching ErrInvalidApplicationMasterRequest.
func (a *AMClient) Register(ctx context.Context, req *hadooppb.RegisterApplicationMasterRequestProto) (*hadooppb.RegisterApplicationMasterResponseProto, error) {
	resp := &hadooppb.RegisterApplicationMasterResponseProto{}
	if err := a.rpc.Call(ctx, "registerApplicationMaster", req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Allocate is the AM's heartbeat: asks, releases and the last response_id received go in; allocated
// and completed containers, NM tokens and possibly a new AM-RM token come back. An RM that forgot the
// AM (restart, failover) answers with an error matching ErrApplicationMasterNotRegistered.
func (a *AMClient) Allocate(ctx context.Context, req *hadooppb.AllocateRequestProto) (*hadooppb.AllocateResponseProto, error) {
	resp := &hadooppb.AllocateResponseProto{}
	if err := a.rpc.Call(ctx, "allocate", req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Finish unregisters the ApplicationMaster with its final status and diagnostics. The RM may answer
// isUnregistered=false while it stores the final state; callers repeat the call until it is true.
func (a *AMClient) Finish(ctx context.Context, req *hadooppb.FinishApplicationMasterRequestProto) (bool, error) {
	resp := &hadooppb.FinishApplicationMasterResponseProto{}
	if err := a.rpc.Call(ctx, "finishApplicationMaster", req, resp); err != nil {
		return false, err
	}
	return resp.GetIsUnregistered(), nil
}
