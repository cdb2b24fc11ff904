package hadoopjar

import (
	"archive/zip"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/internal/classfile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Class returns the file descriptor that a protoc-generated outer class carries, or nil (and no
// error) when the class carries none.
func Class(b []byte) (*descriptorpb.FileDescriptorProto, error) {
	cf, err := classfile.Parse(b)
	if err != nil {
		return nil, err
	}
	if cf.Clinit == nil {
		return nil, nil
	}
	runs, err := cf.LdcRuns()
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		first, err := decodeModifiedUTF8(run[0])
		if err != nil || !looksLikeDescriptorStart(first) {
			continue
		}
		var raw []byte
		for i, part := range run {
			d, err := decodeModifiedUTF8(part)
			if err != nil {
				return nil, fmt.Errorf("descriptor literal %d: %w", i, err)
			}
			raw = append(raw, d...)
		}
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw, fd); err != nil {
			return nil, fmt.Errorf("descriptor of %q (%d bytes): %w", fd.GetName(), len(raw), err)
		}
		return fd, nil
	}
	return nil, nil
}

// Jar returns every file descriptor compiled into the jar at path, sorted by file name. Only outer
// classes (no '$' in the name) are read: protoc puts the descriptor there.
func Jar(path string) ([]*descriptorpb.FileDescriptorProto, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("open jar %s: %w", path, err)
	}
	defer zr.Close()
	var out []*descriptorpb.FileDescriptorProto
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".class") || strings.Contains(f.Name, "$") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("jar %s: open %s: %w", path, f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("jar %s: read %s: %w", path, f.Name, err)
		}
		fd, err := Class(b)
		if err != nil {
			return nil, fmt.Errorf("jar %s: class %s: %w", path, f.Name, err)
		}
		if fd != nil {
			out = append(out, fd)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}
