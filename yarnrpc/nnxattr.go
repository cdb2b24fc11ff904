package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Extended attributes in the user namespace (ClientNamenodeProtocol setXAttr/getXAttrs). The AM keeps
// its small durable state in one (docs/design.md#faults): a single NameNode call, atomic, and possible
// with a delegation token, where writing a file would need the DataNodes too. The messages are
// Hadoop's XAttrProto (namespace = 1, name = 2, value = 3), SetXAttrRequestProto (src = 1, xAttr = 2,
// flag = 3) and GetXAttrsRequestProto / ResponseProto (src = 1, xAttrs = 2 / xAttrs = 1);
// TestXAttrWireFormat pins the encoding.

// ErrNoXAttr is returned by GetXAttr when path has no such attribute.
var ErrNoXAttr = errors.New("no such extended attribute")

const (
	xattrNamespaceUser = 0
	xattrCreate        = 1
	xattrReplace       = 2
)

// appendXAttr appends an XAttrProto of the user namespace (name without the "user." prefix) as
// field num.
func appendXAttr(b []byte, num protowire.Number, name string, value []byte, withValue bool) []byte {
	var x []byte
	x = protowire.AppendTag(x, 1, protowire.VarintType)
	x = protowire.AppendVarint(x, xattrNamespaceUser)
	x = protowire.AppendTag(x, 2, protowire.BytesType)
	x = protowire.AppendString(x, name)
	if withValue {
		x = protowire.AppendTag(x, 3, protowire.BytesType)
		x = protowire.AppendBytes(x, value)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, x)
}

func setXAttrRequest(path, name string, value []byte) []byte {
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), path)
	req = appendXAttr(req, 2, name, value, true)
	req = protowire.AppendTag(req, 3, protowire.VarintType)
	return protowire.AppendVarint(req, xattrCreate|xattrReplace) // create or replace
}

func getXAttrsRequest(path, name string) []byte {
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), path)
	return appendXAttr(req, 2, name, nil, false)
}

// SetXAttr sets the extended attribute user.<name> of path to value, creating or replacing it.
func (n *NameNodeClient) SetXAttr(ctx context.Context, path, name string, value []byte) error {
	if err := n.rpc.Call(ctx, "setXAttr", raw(setXAttrRequest(path, name, value)), &emptypb.Empty{}); err != nil {
		return fmt.Errorf("setting the extended attribute user.%s of %s at %s: %w", name, path, n.addr, err)
	}
	return nil
}

// GetXAttr returns the value of the extended attribute user.<name> of path; ErrNoXAttr if it has none.
func (n *NameNodeClient) GetXAttr(ctx context.Context, path, name string) ([]byte, error) {
	resp := &emptypb.Empty{}
	if err := n.rpc.Call(ctx, "getXAttrs", raw(getXAttrsRequest(path, name)), resp); err != nil {
		// The NameNode refuses a request for an attribute that is not there with an IOException
		// ("At least one of the attributes provided was not found").
		if strings.Contains(err.Error(), "was not found") {
			return nil, fmt.Errorf("user.%s of %s: %w", name, path, ErrNoXAttr)
		}
		return nil, fmt.Errorf("reading the extended attribute user.%s of %s at %s: %w", name, path, n.addr, err)
	}
	return xattrValue(resp.ProtoReflect().GetUnknown(), name)
}

// xattrValue finds the value of user.<name> among a GetXAttrsResponseProto's attributes.
func xattrValue(b []byte, name string) ([]byte, error) {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, errors.New("malformed GetXAttrsResponseProto")
		}
		b = b[l:]
		if num != 1 || typ != protowire.BytesType {
			if l = protowire.ConsumeFieldValue(num, typ, b); l < 0 {
				return nil, errors.New("malformed GetXAttrsResponseProto")
			}
			b = b[l:]
			continue
		}
		x, l := protowire.ConsumeBytes(b)
		if l < 0 {
			return nil, errors.New("malformed GetXAttrsResponseProto")
		}
		b = b[l:]
		var (
			ns    uint64
			nm    string
			value []byte
		)
		for len(x) > 0 {
			n, t, l := protowire.ConsumeTag(x)
			if l < 0 {
				return nil, errors.New("malformed XAttrProto")
			}
			x = x[l:]
			switch {
			case n == 1 && t == protowire.VarintType:
				ns, l = protowire.ConsumeVarint(x)
			case n == 2 && t == protowire.BytesType:
				var s []byte
				s, l = protowire.ConsumeBytes(x)
				nm = string(s)
			case n == 3 && t == protowire.BytesType:
				value, l = protowire.ConsumeBytes(x)
			default:
				l = protowire.ConsumeFieldValue(n, t, x)
			}
			if l < 0 {
				return nil, errors.New("malformed XAttrProto")
			}
			x = x[l:]
		}
		if ns == xattrNamespaceUser && nm == name {
			return append([]byte{}, value...), nil
		}
	}
	return nil, fmt.Errorf("user.%s: %w", name, ErrNoXAttr)
}
