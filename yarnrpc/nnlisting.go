package yarnrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Directory listings (ClientNamenodeProtocol getListing), a NameNode-only call that a delegation
// token is enough for: the AM reads what a checkpoint directory holds before a Flink job restores
// from it (docs/flink.md#when-the-applicationmaster-is-lost). The messages are Hadoop's
// GetListingRequestProto (src = 1, startAfter = 2, needLocation = 3), GetListingResponseProto
// (dirList = 1) and DirectoryListingProto (partialListing = 1, remainingEntries = 2);
// TestListingWireFormat pins the encoding.

// ErrListingTooLong is returned by ListDir for a directory of more entries than it was allowed to read.
var ErrListingTooLong = errors.New("the directory has more entries than are read")

func getListingRequest(dir string, startAfter []byte) []byte {
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), dir)
	req = protowire.AppendTag(req, 2, protowire.BytesType)
	req = protowire.AppendBytes(req, startAfter)
	req = protowire.AppendTag(req, 3, protowire.VarintType)
	return protowire.AppendVarint(req, 0) // no block locations
}

// parseListing reads a GetListingResponseProto: the page's entries and how many remain after it.
// found is false when the response has no listing (the directory does not exist).
func parseListing(b []byte) (entries []FileStatus, remaining uint64, found bool, err error) {
	list, ok := field(b, 1)
	if !ok {
		return nil, 0, false, nil
	}
	for len(list) > 0 {
		num, typ, l := protowire.ConsumeTag(list)
		if l < 0 {
			return nil, 0, true, errors.New("malformed DirectoryListingProto")
		}
		list = list[l:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, l := protowire.ConsumeBytes(list)
			if l < 0 {
				return nil, 0, true, errors.New("malformed DirectoryListingProto")
			}
			st, err := parseFileStatus(v)
			if err != nil {
				return nil, 0, true, err
			}
			entries = append(entries, st)
			list = list[l:]
		case num == 2 && typ == protowire.VarintType:
			v, l := protowire.ConsumeVarint(list)
			if l < 0 {
				return nil, 0, true, errors.New("malformed DirectoryListingProto")
			}
			remaining = v
			list = list[l:]
		default:
			l := protowire.ConsumeFieldValue(num, typ, list)
			if l < 0 {
				return nil, 0, true, errors.New("malformed DirectoryListingProto")
			}
			list = list[l:]
		}
	}
	return entries, remaining, true, nil
}

// ListDir returns the entries of dir (their own names, sizes, times), page by page as the NameNode
// hands them out (dfs.ls.limit, 1000 by default), at most max of them: a longer directory is
// ErrListingTooLong. A dir that does not exist is ErrFileNotFound.
func (n *NameNodeClient) ListDir(ctx context.Context, dir string, max int) ([]FileStatus, error) {
	var all []FileStatus
	var after []byte
	for {
		resp := &emptypb.Empty{}
		if err := n.rpc.Call(ctx, "getListing", raw(getListingRequest(dir, after)), resp); err != nil {
			return nil, fmt.Errorf("listing %s at %s: %w", dir, n.addr, err)
		}
		page, remaining, found, err := parseListing(resp.ProtoReflect().GetUnknown())
		switch {
		case err != nil:
			return nil, fmt.Errorf("listing %s at %s: %w", dir, n.addr, err)
		case !found:
			return nil, fmt.Errorf("listing %s at %s: %w", dir, n.addr, ErrFileNotFound)
		}
		all = append(all, page...)
		if len(all) > max {
			return all[:max], fmt.Errorf("listing %s at %s: %w (%d)", dir, n.addr, ErrListingTooLong, max)
		}
		if remaining == 0 || len(page) == 0 {
			return all, nil
		}
		after = []byte(page[len(page)-1].Name)
	}
}
