package yarnrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/yarn-am/yarn-am/yarnrpc/rpctest"
)

// fileStatusBytes encodes an HdfsFileStatusProto of the fields ListDir reads, with a permission
// (field 4) between them that it must skip.
func fileStatusBytes(name string, dir bool, length uint64, mtime int64) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, map[bool]uint64{true: 1, false: 2}[dir])
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, length)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0x08, 0xed, 0x03})
	b = protowire.AppendTag(b, 7, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(mtime))
}

// listingResponse encodes a GetListingResponseProto of entries with remaining left after them.
func listingResponse(remaining uint64, entries ...[]byte) []byte {
	var list []byte
	for _, e := range entries {
		list = protowire.AppendTag(list, 1, protowire.BytesType)
		list = protowire.AppendBytes(list, e)
	}
	list = protowire.AppendTag(list, 2, protowire.VarintType)
	list = protowire.AppendVarint(list, remaining)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), list)
}

// TestListingWireFormat pins the hand-encoded getListing request to Hadoop's field numbers
// (GetListingRequestProto: src 1, startAfter 2, needLocation 3) and reads a response's entries
// (DirectoryListingProto: partialListing 1, remainingEntries 2; HdfsFileStatusProto: fileType 1,
// path 2, length 3, modification_time 7).
func TestListingWireFormat(t *testing.T) {
	want := []byte{
		0x0a, 0x02, '/', 'c', // src = "/c"
		0x12, 0x05, 'c', 'h', 'k', '-', '9', // startAfter = "chk-9"
		0x18, 0x00, // needLocation = false
	}
	assert.Equal(t, want, getListingRequest("/c", []byte("chk-9")))

	entries, remaining, found, err := parseListing(listingResponse(3,
		fileStatusBytes("chk-10", true, 0, 1_700_000_000_000), fileStatusBytes("_metadata", false, 4242, 1_700_000_001_000)))
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, uint64(3), remaining)
	assert.Equal(t, []FileStatus{
		{Name: "chk-10", IsDir: true, ModTime: time.UnixMilli(1_700_000_000_000)},
		{Name: "_metadata", Length: 4242, ModTime: time.UnixMilli(1_700_000_001_000)},
	}, entries)

	_, _, found, err = parseListing(nil)
	assert.NoError(t, err)
	assert.False(t, found, "a response without a listing: no such directory")
	_, _, _, err = parseListing(listingResponse(0, []byte{0x0a, 0x05, 0x08}))
	assert.Error(t, err, "a truncated entry is an error, not an empty one")
}

// TestListDirPagesAndBounds: ListDir asks for the next page after the last name it got until none
// remain, reads at most max entries (then ErrListingTooLong), and calls a missing directory
// ErrFileNotFound.
func TestListDirPagesAndBounds(t *testing.T) {
	srv := newServer(t, rpctest.Options{})
	names := []string{"chk-1", "chk-2", "chk-3", "shared", "taskowned"}
	var asked []string
	srv.Handle(NameNodeProtocol, "getListing", func(_ context.Context, r *rpctest.Request) (proto.Message, error) {
		var req emptypb.Empty
		require.NoError(t, r.Decode(&req))
		src, _ := field(req.ProtoReflect().GetUnknown(), 1)
		after, _ := field(req.ProtoReflect().GetUnknown(), 2)
		asked = append(asked, fmt.Sprintf("%s after %q", src, after))
		resp := &emptypb.Empty{}
		if string(src) != "/ck/job" {
			return resp, nil
		}
		start := 0
		for i, n := range names {
			if n == string(after) {
				start = i + 1
			}
		}
		end := min(start+2, len(names)) // pages of two
		var page [][]byte
		for _, n := range names[start:end] {
			page = append(page, fileStatusBytes(n, true, 0, 0))
		}
		resp.ProtoReflect().SetUnknown(listingResponse(uint64(len(names)-end), page...))
		return resp, nil
	})
	nn, err := NewNameNodeClient(NewConfig(nil), srv.Addr(), SimpleAuth("alice"), FailFast(nil))
	require.NoError(t, err)
	defer nn.Close()

	got, err := nn.ListDir(ctx(t), "/ck/job", 100)
	require.NoError(t, err)
	var gotNames []string
	for _, e := range got {
		gotNames = append(gotNames, e.Name)
	}
	assert.Equal(t, names, gotNames)
	assert.Equal(t, []string{`/ck/job after ""`, `/ck/job after "chk-2"`, `/ck/job after "shared"`}, asked)

	got, err = nn.ListDir(ctx(t), "/ck/job", 3)
	assert.True(t, errors.Is(err, ErrListingTooLong), "%v", err)
	assert.Len(t, got, 3)

	_, err = nn.ListDir(ctx(t), "/ck/none", 100)
	assert.True(t, errors.Is(err, ErrFileNotFound), "%v", err)
}
