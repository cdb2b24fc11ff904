// Package launchctx turns the contract's local resources and environments into the parts of a YARN
// ContainerLaunchContext. The client builds the AM's launch context with it and the AM builds the
// TaskExecutors', so a manifest entry means the same thing to both (one converter, checked by
// contract.LocalResource.Parse).
package launchctx

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// LocalResource converts one entry to YARN's LocalResourceProto.
func LocalResource(r contract.LocalResource) (*hadooppb.LocalResourceProto, error) {
	u, err := r.Parse()
	if err != nil {
		return nil, err
	}
	pu := &hadooppb.URLProto{Scheme: proto.String(u.Scheme), File: proto.String(u.Path)}
	if u.Host != "" {
		pu.Host = proto.String(u.Host)
	}
	if u.Port != 0 {
		pu.Port = proto.Int32(int32(u.Port))
	}
	typ := hadooppb.LocalResourceTypeProto_FILE
	if r.Type == contract.TypeArchive {
		typ = hadooppb.LocalResourceTypeProto_ARCHIVE
	}
	vis := hadooppb.LocalResourceVisibilityProto_APPLICATION
	switch r.Visibility {
	case contract.VisibilityPrivate:
		vis = hadooppb.LocalResourceVisibilityProto_PRIVATE
	case contract.VisibilityPublic:
		vis = hadooppb.LocalResourceVisibilityProto_PUBLIC
	}
	return &hadooppb.LocalResourceProto{
		Resource:   pu,
		Size:       proto.Int64(r.Size),
		Timestamp:  proto.Int64(r.Timestamp),
		Type:       typ.Enum(),
		Visibility: vis.Enum(),
	}, nil
}

// LocalResources converts entries to the launch context's map, sorted by alias. A later entry with the
// same alias replaces an earlier one.
func LocalResources(entries []contract.LocalResource) ([]*hadooppb.StringLocalResourceMapProto, error) {
	byAlias := map[string]contract.LocalResource{}
	for _, e := range entries {
		byAlias[e.Alias] = e
	}
	aliases := make([]string, 0, len(byAlias))
	for a := range byAlias {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	out := make([]*hadooppb.StringLocalResourceMapProto, 0, len(aliases))
	for _, a := range aliases {
		p, err := LocalResource(byAlias[a])
		if err != nil {
			return nil, err
		}
		out = append(out, &hadooppb.StringLocalResourceMapProto{Key: proto.String(a), Value: p})
	}
	return out, nil
}

// Environment converts an environment to the launch context's list, sorted by name.
func Environment(env map[string]string) []*hadooppb.StringStringMapProto {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*hadooppb.StringStringMapProto, 0, len(keys))
	for _, k := range keys {
		out = append(out, &hadooppb.StringStringMapProto{Key: proto.String(k), Value: proto.String(env[k])})
	}
	return out
}
