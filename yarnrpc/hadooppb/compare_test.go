package hadooppb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The comparison between our definitions and Hadoop's lives here, without a build tag, so that the
// unit tests can prove it reports what it should; conformance_test.go feeds it Hadoop's jars.

// ourPackagePrefix is what every proto package in this directory starts with; dropping "yarnam." gives
// Hadoop's package (yarnam.hadoop.yarn -> hadoop.yarn).
const ourPackagePrefix = "yarnam.hadoop."

// diffKind sorts differences by what they mean for the wire.
type diffKind int

const (
	// diffMismatch: both define the element and a wire fact differs.
	diffMismatch diffKind = iota
	// diffMissing: Hadoop defines a field or enum value of a message/enum we define, and we lack it.
	diffMissing
	// diffExtra: we define something the Hadoop version compared against does not have. Expected when
	// comparing with an older Hadoop than the one the definitions follow.
	diffExtra
)

func (k diffKind) String() string {
	return [...]string{"mismatch", "missing", "extra"}[k]
}

type difference struct {
	kind diffKind
	what string
}

func (d difference) String() string { return d.kind.String() + ": " + d.what }

// compareStats counts what a comparison looked at.
type compareStats struct {
	Messages, Fields, Enums, EnumValues int
}

// hadoopTypes indexes Hadoop's messages and enums by full name (".hadoop.yarn.ResourceProto",
// nested ones as ".hadoop.yarn.Outer.Inner"). A name can occur in more than one file
// (hadoop.common.RequestHeaderProto is in both ProtobufRpcEngine.proto and ProtobufRpcEngine2.proto),
// so each name keeps every candidate with its file.
type hadoopTypes struct {
	messages map[string][]hadoopMessage
	enums    map[string][]hadoopEnum
}

type hadoopMessage struct {
	file string
	msg  *descriptorpb.DescriptorProto
}

type hadoopEnum struct {
	file string
	enum *descriptorpb.EnumDescriptorProto
}

func indexHadoop(files []*descriptorpb.FileDescriptorProto) hadoopTypes {
	idx := hadoopTypes{messages: map[string][]hadoopMessage{}, enums: map[string][]hadoopEnum{}}
	var walk func(file, scope string, m *descriptorpb.DescriptorProto)
	walk = func(file, scope string, m *descriptorpb.DescriptorProto) {
		name := scope + "." + m.GetName()
		idx.messages[name] = append(idx.messages[name], hadoopMessage{file, m})
		for _, n := range m.GetNestedType() {
			walk(file, name, n)
		}
		for _, e := range m.GetEnumType() {
			idx.enums[name+"."+e.GetName()] = append(idx.enums[name+"."+e.GetName()], hadoopEnum{file, e})
		}
	}
	for _, fd := range files {
		scope := ""
		if fd.GetPackage() != "" {
			scope = "." + fd.GetPackage()
		}
		for _, m := range fd.GetMessageType() {
			walk(fd.GetName(), scope, m)
		}
		for _, e := range fd.GetEnumType() {
			idx.enums[scope+"."+e.GetName()] = append(idx.enums[scope+"."+e.GetName()], hadoopEnum{fd.GetName(), e})
		}
	}
	return idx
}

// hadoopName maps one of our full names (".yarnam.hadoop.yarn.X") to Hadoop's (".hadoop.yarn.X").
func hadoopName(ours string) (string, bool) {
	rest, ok := strings.CutPrefix(ours, "."+ourPackagePrefix)
	if !ok {
		return "", false
	}
	return ".hadoop." + rest, true
}

// compareToHadoop checks every message, field and enum value of ours against Hadoop's definitions
// and returns every difference, sorted, plus what it counted.
func compareToHadoop(ours, hadoop []*descriptorpb.FileDescriptorProto) ([]difference, compareStats) {
	c := &comparer{idx: indexHadoop(hadoop)}
	for _, fd := range ours {
		if !strings.HasPrefix(fd.GetPackage(), ourPackagePrefix) {
			c.add(diffMismatch, "file %s: package %q does not start with %q, so it maps to no Hadoop package",
				fd.GetName(), fd.GetPackage(), ourPackagePrefix)
			continue
		}
		scope := "." + fd.GetPackage()
		for _, m := range fd.GetMessageType() {
			c.message(fd.GetName(), scope, m)
		}
		for _, e := range fd.GetEnumType() {
			c.enum(fd.GetName(), scope, e)
		}
	}
	sort.Slice(c.diffs, func(i, j int) bool {
		if c.diffs[i].kind != c.diffs[j].kind {
			return c.diffs[i].kind < c.diffs[j].kind
		}
		return c.diffs[i].what < c.diffs[j].what
	})
	return c.diffs, c.stats
}

type comparer struct {
	idx   hadoopTypes
	diffs []difference
	stats compareStats
}

func (c *comparer) add(kind diffKind, format string, args ...any) {
	c.diffs = append(c.diffs, difference{kind, fmt.Sprintf(format, args...)})
}

func (c *comparer) message(file, scope string, m *descriptorpb.DescriptorProto) {
	ours := scope + "." + m.GetName()
	c.stats.Messages++
	c.stats.Fields += len(m.GetField())
	for _, n := range m.GetNestedType() {
		c.message(file, ours, n)
	}
	for _, e := range m.GetEnumType() {
		c.enum(file, ours, e)
	}
	theirsName, _ := hadoopName(ours)
	candidates := c.idx.messages[theirsName]
	if len(candidates) == 0 {
		if len(c.idx.enums[theirsName]) > 0 {
			c.add(diffMismatch, "%s (%s): a message here, an enum in Hadoop", ours, file)
			return
		}
		c.add(diffExtra, "%s (%s): Hadoop has no message %s", ours, file, theirsName)
		return
	}
	// Compare with every candidate and keep the closest one's differences.
	var best []difference
	for i, cand := range candidates {
		d := compareMessage(ours, file, m, cand)
		if i == 0 || len(d) < len(best) {
			best = d
		}
	}
	c.diffs = append(c.diffs, best...)
}

func compareMessage(ours, file string, m *descriptorpb.DescriptorProto, theirs hadoopMessage) []difference {
	var diffs []difference
	add := func(kind diffKind, format string, args ...any) {
		diffs = append(diffs, difference{kind, fmt.Sprintf("%s (%s vs Hadoop's %s): ", ours, file, theirs.file) +
			fmt.Sprintf(format, args...)})
	}
	theirFields := map[int32]*descriptorpb.FieldDescriptorProto{}
	for _, f := range theirs.msg.GetField() {
		theirFields[f.GetNumber()] = f
	}
	ourNumbers := map[int32]bool{}
	for _, f := range m.GetField() {
		ourNumbers[f.GetNumber()] = true
		tf, ok := theirFields[f.GetNumber()]
		if !ok {
			kind := diffExtra
			for _, other := range theirs.msg.GetField() {
				if other.GetName() == f.GetName() {
					kind = diffMismatch // same name, other number: a wrong number, not a newer field
				}
			}
			add(kind, "field %s = %d: Hadoop has no field %d", f.GetName(), f.GetNumber(), f.GetNumber())
			continue
		}
		for _, p := range fieldFacts(f, tf) {
			add(diffMismatch, "field %d (%s): %s", f.GetNumber(), f.GetName(), p)
		}
	}
	for _, tf := range theirs.msg.GetField() {
		if !ourNumbers[tf.GetNumber()] {
			add(diffMissing, "lacks Hadoop's field %s %s %s = %d", labelName(tf), typeName(tf), tf.GetName(), tf.GetNumber())
		}
	}
	if o, t := rangesText(m.GetExtensionRange()), rangesText(theirs.msg.GetExtensionRange()); o != t {
		kind := diffMismatch
		if len(theirs.msg.GetExtensionRange()) == 0 {
			kind = diffExtra // e.g. 3.1's ProtobufRpcEngine.proto, before ProtobufRpcEngine2 added them
		}
		add(kind, "extension ranges %s, Hadoop's %s", o, t)
	}
	return diffs
}

// fieldFacts lists how two fields with the same number differ in name, label, type, referenced type,
// default and packing: everything that decides how a value is written and read.
func fieldFacts(ours, theirs *descriptorpb.FieldDescriptorProto) []string {
	var out []string
	check := func(what, o, t string) {
		if o != t {
			out = append(out, fmt.Sprintf("%s %s, Hadoop's %s", what, o, t))
		}
	}
	check("name", ours.GetName(), theirs.GetName())
	check("label", labelName(ours), labelName(theirs))
	check("type", typeName(ours), typeName(theirs))
	check("default", defaultText(ours), defaultText(theirs))
	check("packed", fmt.Sprint(ours.GetOptions().GetPacked()), fmt.Sprint(theirs.GetOptions().GetPacked()))
	return out
}

func labelName(f *descriptorpb.FieldDescriptorProto) string {
	return strings.ToLower(strings.TrimPrefix(f.GetLabel().String(), "LABEL_"))
}

// typeName is the scalar type, or the referenced message/enum in Hadoop's naming.
func typeName(f *descriptorpb.FieldDescriptorProto) string {
	switch f.GetType() {
	case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, descriptorpb.FieldDescriptorProto_TYPE_ENUM,
		descriptorpb.FieldDescriptorProto_TYPE_GROUP:
		kind := strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_"))
		name := f.GetTypeName()
		if h, ok := hadoopName(name); ok {
			name = h
		}
		return kind + " " + name
	}
	return strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_"))
}

func defaultText(f *descriptorpb.FieldDescriptorProto) string {
	if f.DefaultValue == nil {
		return "(none)"
	}
	return fmt.Sprintf("%q", f.GetDefaultValue())
}

func rangesText(rs []*descriptorpb.DescriptorProto_ExtensionRange) string {
	if len(rs) == 0 {
		return "(none)"
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("[%d,%d)", r.GetStart(), r.GetEnd()))
	}
	return strings.Join(parts, " ")
}

func (c *comparer) enum(file, scope string, e *descriptorpb.EnumDescriptorProto) {
	ours := scope + "." + e.GetName()
	c.stats.Enums++
	c.stats.EnumValues += len(e.GetValue())
	theirsName, _ := hadoopName(ours)
	candidates := c.idx.enums[theirsName]
	if len(candidates) == 0 {
		if len(c.idx.messages[theirsName]) > 0 {
			c.add(diffMismatch, "%s (%s): an enum here, a message in Hadoop", ours, file)
			return
		}
		c.add(diffExtra, "%s (%s): Hadoop has no enum %s", ours, file, theirsName)
		return
	}
	var best []difference
	for i, cand := range candidates {
		d := compareEnum(ours, file, e, cand)
		if i == 0 || len(d) < len(best) {
			best = d
		}
	}
	c.diffs = append(c.diffs, best...)
}

func compareEnum(ours, file string, e *descriptorpb.EnumDescriptorProto, theirs hadoopEnum) []difference {
	var diffs []difference
	add := func(kind diffKind, format string, args ...any) {
		diffs = append(diffs, difference{kind, fmt.Sprintf("%s (%s vs Hadoop's %s): ", ours, file, theirs.file) +
			fmt.Sprintf(format, args...)})
	}
	theirValues := map[string]int32{}
	for _, v := range theirs.enum.GetValue() {
		theirValues[v.GetName()] = v.GetNumber()
	}
	ourValues := map[string]bool{}
	for _, v := range e.GetValue() {
		ourValues[v.GetName()] = true
		n, ok := theirValues[v.GetName()]
		switch {
		case !ok:
			add(diffExtra, "value %s = %d: Hadoop has no value %s", v.GetName(), v.GetNumber(), v.GetName())
		case n != v.GetNumber():
			add(diffMismatch, "value %s = %d, Hadoop's = %d", v.GetName(), v.GetNumber(), n)
		}
	}
	for _, v := range theirs.enum.GetValue() {
		if !ourValues[v.GetName()] {
			add(diffMissing, "lacks Hadoop's value %s = %d", v.GetName(), v.GetNumber())
		}
	}
	return diffs
}

// ourFiles returns the descriptors of every file this package registers.
func ourFiles(t *testing.T) []*descriptorpb.FileDescriptorProto {
	t.Helper()
	var out []*descriptorpb.FileDescriptorProto
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(fd.Package()), ourPackagePrefix) {
			out = append(out, protodesc.ToFileDescriptorProto(fd))
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	require.NotEmpty(t, out, "no %s* files registered: is the generated code linked in?", ourPackagePrefix)
	return out
}

// asHadoop renames our packages to Hadoop's, turning our definitions into a stand-in for Hadoop's.
func asHadoop(files []*descriptorpb.FileDescriptorProto) []*descriptorpb.FileDescriptorProto {
	var out []*descriptorpb.FileDescriptorProto
	for _, fd := range files {
		fd = proto.Clone(fd).(*descriptorpb.FileDescriptorProto)
		fd.Package = proto.String(strings.TrimPrefix(fd.GetPackage(), "yarnam."))
		out = append(out, fd)
	}
	return out
}

func TestCompareOurFilesWithThemselvesFindsNothing(t *testing.T) {
	ours := ourFiles(t)
	diffs, stats := compareToHadoop(ours, asHadoop(ours))
	assert.Empty(t, diffs)
	// Sanity floor: the definitions are much bigger than this.
	assert.Greater(t, stats.Messages, 100)
	assert.Greater(t, stats.Fields, 400)
	t.Logf("compared %d messages, %d fields, %d enums, %d enum values", stats.Messages, stats.Fields,
		stats.Enums, stats.EnumValues)
}

// wrongResource is an in-memory file that gets several facts of ResourceProto wrong at once.
func wrongResource(t *testing.T) *descriptorpb.FileDescriptorProto {
	t.Helper()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("yarnam_wrong.proto"),
		Package: proto.String("yarnam.hadoop.yarn"),
		Syntax:  proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{
			{
				Name: proto.String("ResourceProto"),
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: proto.String("memory"), Number: proto.Int32(1), Label: opt,
						Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()},
					// Wrong type: Hadoop's is int32.
					{Name: proto.String("virtual_cores"), Number: proto.Int32(2), Label: opt,
						Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()},
					// Wrong number: Hadoop's is 3.
					{Name: proto.String("resource_value_map"), Number: proto.Int32(4), Label: rep,
						Type:     descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
						TypeName: proto.String(".yarnam.hadoop.yarn.ResourceInformationProto")},
				},
			},
			{Name: proto.String("ResourceInformationProto")},
		},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("ExecutionTypeProto"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("GUARANTEED"), Number: proto.Int32(1)},
				{Name: proto.String("OPPORTUNISTIC"), Number: proto.Int32(3)}, // Hadoop's is 2
			},
		}},
	}
	// It must be a valid descriptor in its own right, or the test proves nothing.
	_, err := protodesc.NewFile(fd, nil)
	require.NoError(t, err)
	return fd
}

func TestCompareReportsEveryDifferenceAtOnce(t *testing.T) {
	var hadoop []*descriptorpb.FileDescriptorProto
	for _, fd := range asHadoop(ourFiles(t)) {
		if fd.GetName() == "yarnam_yarn_protos.proto" {
			hadoop = append(hadoop, fd)
		}
	}
	require.Len(t, hadoop, 1)

	diffs, stats := compareToHadoop([]*descriptorpb.FileDescriptorProto{wrongResource(t)}, hadoop)
	var got []string
	for _, d := range diffs {
		got = append(got, d.String())
	}
	t.Log(strings.Join(got, "\n"))

	prefix := ".yarnam.hadoop.yarn.ResourceProto (yarnam_wrong.proto vs Hadoop's yarnam_yarn_protos.proto): "
	infoPrefix := ".yarnam.hadoop.yarn.ResourceInformationProto (yarnam_wrong.proto vs Hadoop's yarnam_yarn_protos.proto): "
	enumPrefix := ".yarnam.hadoop.yarn.ExecutionTypeProto (yarnam_wrong.proto vs Hadoop's yarnam_yarn_protos.proto): "
	assert.Contains(t, got, "mismatch: "+prefix+"field 2 (virtual_cores): type int64, Hadoop's int32")
	assert.Contains(t, got, "mismatch: "+prefix+"field resource_value_map = 4: Hadoop has no field 4")
	assert.Contains(t, got, "missing: "+prefix+
		"lacks Hadoop's field repeated message .hadoop.yarn.ResourceInformationProto resource_value_map = 3")
	assert.Contains(t, got, "mismatch: "+enumPrefix+"value OPPORTUNISTIC = 3, Hadoop's = 2")
	assert.Contains(t, got, "missing: "+infoPrefix+"lacks Hadoop's field required string key = 1")
	assert.Equal(t, compareStats{Messages: 2, Fields: 3, Enums: 1, EnumValues: 2}, stats)
}

func TestCompareReportsKindAndPackageProblems(t *testing.T) {
	hadoop := []*descriptorpb.FileDescriptorProto{{
		Name:        proto.String("h.proto"),
		Package:     proto.String("hadoop.yarn"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("AProto")}},
		EnumType:    []*descriptorpb.EnumDescriptorProto{{Name: proto.String("BProto")}},
	}}
	ours := []*descriptorpb.FileDescriptorProto{
		{
			Name:        proto.String("o.proto"),
			Package:     proto.String("yarnam.hadoop.yarn"),
			EnumType:    []*descriptorpb.EnumDescriptorProto{{Name: proto.String("AProto")}},
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("BProto")}, {Name: proto.String("NewProto")}},
		},
		{Name: proto.String("x.proto"), Package: proto.String("hadoop.yarn")},
	}
	diffs, _ := compareToHadoop(ours, hadoop)
	var got []string
	for _, d := range diffs {
		got = append(got, d.String())
	}
	assert.Equal(t, []string{
		"mismatch: .yarnam.hadoop.yarn.AProto (o.proto): an enum here, a message in Hadoop",
		"mismatch: .yarnam.hadoop.yarn.BProto (o.proto): a message here, an enum in Hadoop",
		`mismatch: file x.proto: package "hadoop.yarn" does not start with "yarnam.hadoop.", so it maps to no Hadoop package`,
		"extra: .yarnam.hadoop.yarn.NewProto (o.proto): Hadoop has no message .hadoop.yarn.NewProto",
	}, got)
}

// olderThan34 says whether version is a release before 3.4 (3.1.x to 3.3.x), against which the
// elements we define and it lacks are expected.
func olderThan34(version string) bool { return olderThan(version, "3.4.0") }

// olderThan compares two dotted release numbers ("3.5.0") numerically, a missing part as 0; a version
// with a part that is not a number never counts as older (so the comparison stays strict for it).
func olderThan(version, than string) bool {
	a, b := strings.Split(version, "."), strings.Split(than, ".")
	for _, p := range a {
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x, _ = strconv.Atoi(a[i])
		}
		if i < len(b) {
			y, _ = strconv.Atoi(b[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// TestOlderThan: release numbers compare part by part as numbers (3.10 is newer than 3.5), and a
// malformed one never counts as older, so the conformance test stays strict for it.
func TestOlderThan(t *testing.T) {
	for _, c := range []struct {
		v, than string
		want    bool
	}{
		{"3.1.4", "3.4.0", true}, {"3.3.6", "3.4.0", true}, {"3.4.0", "3.4.0", false}, {"3.4.3", "3.4.0", false},
		{"3.5.0", "3.4.0", false}, {"3.4.3", "3.5.0", true}, {"3.10.0", "3.5.0", false}, {"3.5", "3.5.0", false},
		{"x.y", "3.4.0", false}, {"", "3.4.0", false}, {"3.4.x", "3.5.0", false}, {"3.x", "3.5.0", false},
	} {
		assert.Equal(t, c.want, olderThan(c.v, c.than), "olderThan(%q, %q)", c.v, c.than)
	}
}
