package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// ContainerManagementProtocol is the protocol name of a NodeManager's container manager port.
const ContainerManagementProtocol = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"

// NMTokenKind is the kind of the tokens an AM uses to talk to NodeManagers.
const NMTokenKind = "NMToken"

// containerManagementIdempotent: getContainerStatuses only reads, and stopping a container twice is
// answered with the container's (already stopped) state. startContainers is not listed: a second
// start of the same container fails on the NM.
var containerManagementIdempotent = []string{"getContainerStatuses", "stopContainers"}

// NMClient talks ContainerManagementProtocol to the NodeManagers of one application attempt. It keeps
// the NMToken of each node (the RM hands them out in allocate responses, and only when the AM has none
// for the node or the old one rolled) and a connection per node authenticated with it. It is safe for
// concurrent use: an AM launches on several nodes at once.
type NMClient struct {
	co   ConnOptions
	user string

	mu      sync.Mutex
	tokens  map[string]Token   // node address (host:port) → NMToken
	clients map[string]*Client // node address → client
	closed  bool
}

// NewNMClient returns a client whose connections use co (Protocol and Auth are set per node). user is
// the application attempt id (appattempt_<ts>_<app>_<attempt>), the identity NMTokens are issued to.
func NewNMClient(co ConnOptions, user string) *NMClient {
	return &NMClient{co: co, user: user, tokens: map[string]Token{}, clients: map[string]*Client{}}
}

// SetToken stores the NMToken for node (host:port); its service is set to node. Connections opened
// later use it; an open connection keeps the token it authenticated with.
func (n *NMClient) SetToken(node string, tok Token) error {
	tok.Service = node
	if tok.Kind == "" {
		tok.Kind = NMTokenKind
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tokens[node] = tok
	if c := n.clients[node]; c != nil {
		return c.SetAuth(TokenAuth(tok, n.user))
	}
	return nil
}

// HasToken reports whether an NMToken for node is known.
func (n *NMClient) HasToken(node string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.tokens[node]
	return ok
}

// Nodes returns the nodes with a known NMToken, sorted.
func (n *NMClient) Nodes() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.tokens))
	for k := range n.tokens {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (n *NMClient) client(node string) (*Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("yarnrpc: NM client %w", ErrClosed)
	}
	if c := n.clients[node]; c != nil {
		return c, nil
	}
	tok, ok := n.tokens[node]
	if !ok {
		return nil, fmt.Errorf("yarnrpc: no NMToken for node %s: the RM sends one with the first container allocated on a node; "+
			"containers of a node without one cannot be started", node)
	}
	co := n.co
	co.Protocol = ContainerManagementProtocol
	co.Auth = TokenAuth(tok, n.user)
	c, err := NewClient(ClientOptions{Addresses: []string{node}, ConnOptions: co, MaxAttempts: 3,
		IdempotentMethods: containerManagementIdempotent})
	if err != nil {
		return nil, err
	}
	n.clients[node] = c
	return c, nil
}

// StartContainers starts containers on node (each request carries the container's launch context and
// its container token from the allocation). When the call succeeds but the NodeManager refused some
// containers, the response comes back (its succeeded_requests started) together with an error that
// joins one *ContainerError per refused container.
func (n *NMClient) StartContainers(ctx context.Context, node string, reqs ...*hadooppb.StartContainerRequestProto) (*hadooppb.StartContainersResponseProto, error) {
	c, err := n.client(node)
	if err != nil {
		return nil, err
	}
	resp := &hadooppb.StartContainersResponseProto{}
	if err := c.Call(ctx, "startContainers", &hadooppb.StartContainersRequestProto{StartContainerRequest: reqs}, resp); err != nil {
		return nil, err
	}
	var failed []error
	for _, f := range resp.GetFailedRequests() {
		failed = append(failed, ContainerFailure(f))
	}
	return resp, errors.Join(failed...)
}

// StopContainers stops containers on node.
func (n *NMClient) StopContainers(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.StopContainersResponseProto, error) {
	c, err := n.client(node)
	if err != nil {
		return nil, err
	}
	resp := &hadooppb.StopContainersResponseProto{}
	if err := c.Call(ctx, "stopContainers", &hadooppb.StopContainersRequestProto{ContainerId: ids}, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// GetContainerStatuses returns the NM's view of containers on node.
func (n *NMClient) GetContainerStatuses(ctx context.Context, node string, ids ...*hadooppb.ContainerIdProto) (*hadooppb.GetContainerStatusesResponseProto, error) {
	c, err := n.client(node)
	if err != nil {
		return nil, err
	}
	resp := &hadooppb.GetContainerStatusesResponseProto{}
	if err := c.Call(ctx, "getContainerStatuses", &hadooppb.GetContainerStatusesRequestProto{ContainerId: ids}, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Close closes every node's connections.
func (n *NMClient) Close() error {
	n.mu.Lock()
	n.closed = true
	clients := n.clients
	n.clients = map[string]*Client{}
	n.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	return nil
}

// TokenFromProto converts a TokenProto (AM-RM token, NM token, container token) to a Token.
func TokenFromProto(p *hadooppb.TokenProto) Token {
	return Token{Identifier: p.GetIdentifier(), Password: p.GetPassword(), Kind: p.GetKind(), Service: p.GetService()}
}

// FormatContainerID renders a container id as YARN prints it:
// container_[e<epoch>_]<clusterTimestamp>_<app, 4+ digits>_<attempt, 2+ digits>_<id, 6+ digits>.
func FormatContainerID(id *hadooppb.ContainerIdProto) string {
	att := id.GetAppAttemptId()
	app := att.GetApplicationId()
	if app == nil {
		app = id.GetAppId()
	}
	n := id.GetId()
	epoch := n >> 40
	s := "container_"
	if epoch > 0 {
		s += fmt.Sprintf("e%02d_", epoch)
	}
	return s + fmt.Sprintf("%d_%04d_%02d_%06d", app.GetClusterTimestamp(), app.GetId(), att.GetAttemptId(), n&(1<<40-1))
}

// FormatAttemptID renders an attempt id as YARN prints it: appattempt_<ts>_<app, 4+ digits>_<attempt, 6 digits>.
func FormatAttemptID(id *hadooppb.ApplicationAttemptIdProto) string {
	app := id.GetApplicationId()
	return fmt.Sprintf("appattempt_%d_%04d_%06d", app.GetClusterTimestamp(), app.GetId(), id.GetAttemptId())
}

// ParseContainerID parses container_[e<epoch>_]<ts>_<app>_<attempt>_<id> (the CONTAINER_ID variable
// YARN sets in every container).
func ParseContainerID(s string) (*hadooppb.ContainerIdProto, error) {
	bad := fmt.Errorf("%q is not a container id; want container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<id>, "+
		"e.g. container_1700000000000_0001_01_000001", s)
	parts := strings.Split(s, "_")
	if len(parts) < 5 || parts[0] != "container" {
		return nil, bad
	}
	var epoch int64
	if strings.HasPrefix(parts[1], "e") {
		e, err := strconv.ParseInt(parts[1][1:], 10, 64)
		if err != nil || e < 0 {
			return nil, bad
		}
		epoch, parts = e, parts[1:]
	}
	if len(parts) != 5 {
		return nil, bad
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	app, err2 := strconv.ParseInt(parts[2], 10, 32)
	att, err3 := strconv.ParseInt(parts[3], 10, 32)
	n, err4 := strconv.ParseInt(parts[4], 10, 64)
	// Timestamps, application numbers and attempts start at 1 (container_..._-1_... would be sent to a
	// NodeManager and refused there).
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || ts < 1 || app < 1 || att < 1 || n < 0 || n >= 1<<40 {
		return nil, bad
	}
	appID := &hadooppb.ApplicationIdProto{ClusterTimestamp: proto.Int64(ts), Id: proto.Int32(int32(app))}
	return &hadooppb.ContainerIdProto{
		AppId:        appID,
		AppAttemptId: &hadooppb.ApplicationAttemptIdProto{ApplicationId: appID, AttemptId: proto.Int32(int32(att))},
		Id:           proto.Int64(epoch<<40 | n),
	}, nil
}
