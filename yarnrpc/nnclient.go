package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// The few NameNode (ClientNamenodeProtocol) calls yarn-am makes itself: delegation tokens, which
// colinmarc/hdfs does not expose, and — for the AM on a Kerberized cluster, where only a delegation
// token (TOKEN/DIGEST-MD5) gets it in — the stat and delete of the staging directory.

// NameNodeProtocol is the protocol name of the NameNode's client port.
const NameNodeProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// HDFSDelegationTokenKind is the kind of the NameNode's delegation tokens.
const HDFSDelegationTokenKind = "HDFS_DELEGATION_TOKEN"

// NameNodeClient calls one NameNode.
type NameNodeClient struct {
	rpc  *Client
	addr string
}

// NewNameNodeClient builds a client of the NameNode at addr (host:port) with auth (KERBEROS from
// conf.KerberosAuth(login, NameNodeProtocol), or TOKEN with an HDFS delegation token) and conf's
// hadoop.rpc.protection. Without options it is patient, as the AM needs; FailFast suits commands.
func NewNameNodeClient(conf *Config, addr string, auth Auth, opts ...ClientOption) (*NameNodeClient, error) {
	co, err := conf.ConnDefaults()
	if err != nil {
		return nil, err
	}
	co.Protocol = NameNodeProtocol
	co.Auth = auth
	o := ClientOptions{Addresses: []string{addr}, ConnOptions: co, Role: "NameNode",
		IdempotentMethods: []string{"getFileInfo", "getListing", "getServerDefaults"}}
	for _, f := range opts {
		f(&o)
	}
	c, err := NewClient(o)
	if err != nil {
		return nil, err
	}
	return &NameNodeClient{rpc: c, addr: addr}, nil
}

// Addr is the NameNode's address.
func (n *NameNodeClient) Addr() string { return n.addr }

// Close closes the connection.
func (n *NameNodeClient) Close() error { return n.rpc.Close() }

// GetDelegationToken asks the NameNode for an HDFS delegation token that renewer may renew; its
// service is set to the NameNode's ip:port as Hadoop's client does.
func (n *NameNodeClient) GetDelegationToken(ctx context.Context, renewer string) (Token, error) {
	if renewer == "" {
		return Token{}, errors.New("yarnrpc: an HDFS delegation token needs a renewer (the RM principal's short name, e.g. yarn)")
	}
	resp := &hadooppb.GetDelegationTokenResponseProto{}
	if err := n.rpc.Call(ctx, "getDelegationToken", &hadooppb.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, resp); err != nil {
		return Token{}, fmt.Errorf("getting an HDFS delegation token from %s (renewer %s): %w", n.addr, renewer, err)
	}
	if resp.GetToken() == nil {
		return Token{}, fmt.Errorf("getting an HDFS delegation token from %s: the NameNode returned none (it issues them only to Kerberos callers)", n.addr)
	}
	t := TokenFromProto(resp.GetToken())
	t.Service = TokenService(ctx, n.addr)
	return t, nil
}

// RenewDelegationToken renews an HDFS delegation token (the caller must be its renewer) and returns
// the new expiry, in milliseconds since the epoch.
func (n *NameNodeClient) RenewDelegationToken(ctx context.Context, tok Token) (int64, error) {
	resp := &hadooppb.RenewDelegationTokenResponseProto{}
	if err := n.rpc.Call(ctx, "renewDelegationToken", &hadooppb.RenewDelegationTokenRequestProto{Token: tok.Proto()}, resp); err != nil {
		return 0, fmt.Errorf("renewing %s at %s: %w", tok, n.addr, err)
	}
	return int64(resp.GetNewExpiryTime()), nil
}

// FileStatus is what yarn-am needs of a NameNode file status.
type FileStatus struct {
	// Name is the entry's own name in a directory listing (GetListing); empty from GetFileInfo.
	Name    string
	Length  int64
	ModTime time.Time
	IsDir   bool
}

// raw wraps hand-encoded protobuf bytes as a message: the few HDFS messages used here are not worth
// generated code (their fields are those of Hadoop's ClientNamenodeProtocol.proto and hdfs.proto).
func raw(b []byte) *emptypb.Empty {
	m := &emptypb.Empty{}
	m.ProtoReflect().SetUnknown(b)
	return m
}

// ErrFileNotFound is returned by GetFileInfo for a path that does not exist.
var ErrFileNotFound = errors.New("file does not exist")

// GetFileInfo returns the status of path.
func (n *NameNodeClient) GetFileInfo(ctx context.Context, path string) (FileStatus, error) {
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), path) // src
	resp := &emptypb.Empty{}
	if err := n.rpc.Call(ctx, "getFileInfo", raw(req), resp); err != nil {
		return FileStatus{}, fmt.Errorf("stat %s at %s: %w", path, n.addr, err)
	}
	fsBytes, ok := field(resp.ProtoReflect().GetUnknown(), 1)
	if !ok {
		return FileStatus{}, fmt.Errorf("stat %s at %s: %w", path, n.addr, ErrFileNotFound)
	}
	st, err := parseFileStatus(fsBytes)
	if err != nil {
		return st, fmt.Errorf("stat %s: %w", path, err)
	}
	st.Name = ""
	return st, nil
}

// parseFileStatus reads an HdfsFileStatusProto: fileType (1; IS_DIR = 1), path (2: the local name in
// a listing), length (3), modification_time (7, ms); other fields are skipped.
func parseFileStatus(b []byte) (FileStatus, error) {
	var st FileStatus
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return st, errors.New("malformed HdfsFileStatusProto")
		}
		b = b[l:]
		switch {
		case typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return st, errors.New("malformed HdfsFileStatusProto")
			}
			switch num {
			case 1:
				st.IsDir = v == 1
			case 3:
				st.Length = int64(v)
			case 7:
				st.ModTime = time.UnixMilli(int64(v))
			}
			b = b[l:]
			continue
		case typ == protowire.BytesType && num == 2:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return st, errors.New("malformed HdfsFileStatusProto")
			}
			st.Name = string(v)
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(num, typ, b)
		if l < 0 {
			return st, errors.New("malformed HdfsFileStatusProto")
		}
		b = b[l:]
	}
	return st, nil
}

// field returns the bytes of the first length-delimited field num of a message.
func field(b []byte, num protowire.Number) ([]byte, bool) {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, false
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			return v, l >= 0
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil, false
		}
		b = b[l:]
	}
	return nil, false
}

// Delete removes path (recursively when asked); it reports whether something was deleted.
func (n *NameNodeClient) Delete(ctx context.Context, path string, recursive bool) (bool, error) {
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), path)
	req = protowire.AppendTag(req, 2, protowire.VarintType)
	req = protowire.AppendVarint(req, protowire.EncodeBool(recursive))
	resp := &emptypb.Empty{}
	if err := n.rpc.Call(ctx, "delete", raw(req), resp); err != nil {
		return false, fmt.Errorf("deleting %s at %s: %w", path, n.addr, err)
	}
	b := resp.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			break
		}
		b = b[l:]
		if num == 1 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(b)
			return v != 0, nil
		}
		if l = protowire.ConsumeFieldValue(num, typ, b); l < 0 {
			break
		}
		b = b[l:]
	}
	return false, nil
}

// SetAuth replaces the authentication of new connections (a fresh delegation token); open
// connections stay as they are.
func (n *NameNodeClient) SetAuth(a Auth) error { return n.rpc.SetAuth(a) }
