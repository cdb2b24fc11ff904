package hadoopjar

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yarn-am/yarn-am/internal/classfile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Constant-pool tags (JVMS §4.4) and opcodes (JVMS §6.5) the tests write; internal/classfile reads
// them.
const (
	tagUtf8   = 1
	tagLong   = 5
	tagString = 8

	opLdc          = 0x12
	opLdcW         = 0x13
	opIinc         = 0x84
	opTableswitch  = 0xaa
	opInvokestatic = 0xb8
	opWide         = 0xc4
)

// classBuilder writes just enough of a JVM class file for the parser: a constant pool, no fields, and
// one <clinit> method with the given bytecode.
type classBuilder struct {
	pool  []byte
	count uint16 // next free pool index
}

func newClassBuilder() *classBuilder { return &classBuilder{count: 1} }

// encodeModifiedUTF8 is the JVM's encoding of a string whose chars are the bytes of b.
func encodeModifiedUTF8(b []byte) []byte {
	var out []byte
	for _, c := range b {
		if c != 0 && c < 0x80 {
			out = append(out, c)
			continue
		}
		out = append(out, 0xC0|c>>6, 0x80|c&0x3F)
	}
	return out
}

func (cb *classBuilder) utf8(b []byte) uint16 {
	cb.pool = append(cb.pool, tagUtf8)
	cb.pool = binary.BigEndian.AppendUint16(cb.pool, uint16(len(b)))
	cb.pool = append(cb.pool, b...)
	cb.count++
	return cb.count - 1
}

func (cb *classBuilder) str(b []byte) uint16 {
	u := cb.utf8(encodeModifiedUTF8(b))
	cb.pool = append(cb.pool, tagString)
	cb.pool = binary.BigEndian.AppendUint16(cb.pool, u)
	cb.count++
	return cb.count - 1
}

func (cb *classBuilder) long() {
	cb.pool = append(cb.pool, tagLong, 0, 0, 0, 0, 0, 0, 0, 42)
	cb.count += 2
}

func (cb *classBuilder) build(code []byte) []byte {
	clinit := cb.utf8([]byte("<clinit>"))
	codeName := cb.utf8([]byte("Code"))
	sig := cb.utf8([]byte("()V"))
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0xCAFEBABE)
	b = append(b, 0, 0, 0, 61) // Java 17
	b = binary.BigEndian.AppendUint16(b, cb.count)
	b = append(b, cb.pool...)
	b = append(b, 0, 0x21, 0, 0, 0, 0) // flags, this, super
	b = append(b, 0, 0)                // interfaces
	b = append(b, 0, 0)                // fields
	b = append(b, 0, 1)                // methods
	b = append(b, 0, 8)                // static
	b = binary.BigEndian.AppendUint16(b, clinit)
	b = binary.BigEndian.AppendUint16(b, sig)
	b = append(b, 0, 1) // one attribute
	b = binary.BigEndian.AppendUint16(b, codeName)
	b = binary.BigEndian.AppendUint32(b, uint32(8+len(code)+4))
	b = append(b, 0, 8, 0, 1) // max stack, max locals
	b = binary.BigEndian.AppendUint32(b, uint32(len(code)))
	b = append(b, code...)
	b = append(b, 0, 0, 0, 0) // no exception table, no attributes
	b = append(b, 0, 0)       // class attributes
	return b
}

func sampleDescriptor(t *testing.T) (*descriptorpb.FileDescriptorProto, []byte) {
	t.Helper()
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("sample.proto"),
		Package: proto.String("hadoop.sample"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("SampleProto"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name:   proto.String("id"),
				Number: proto.Int32(1000), // a varint with a byte >= 0x80, so modified UTF-8 is exercised
				Label:  descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				Type:   descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(),
			}},
		}},
		// Value 0 puts a NUL byte into the descriptor, which the JVM stores as 0xC0 0x80.
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name:  proto.String("SampleKindProto"),
			Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("S_NONE"), Number: proto.Int32(0)}},
		}},
	}
	raw, err := proto.Marshal(fd)
	require.NoError(t, err)
	return fd, raw
}

func TestClassFindsDescriptorSplitAcrossLiterals(t *testing.T) {
	want, raw := sampleDescriptor(t)
	require.Contains(t, string(raw), "\x00", "the sample must contain a NUL byte to test its encoding")
	cut := len(raw) / 2

	cb := newClassBuilder()
	cb.long() // two pool slots: indexes after it must still line up
	first := cb.str(raw[:cut])
	second := cb.str(raw[cut:])
	accessor := cb.str([]byte("Id"))

	code := []byte{
		0x10, 3, // bipush 3 (pc 0)
		opTableswitch, 0, // pc 2, padded to 4
		0, 0, 0, 20, // default
		0, 0, 0, 1, 0, 0, 0, 1, // low 1, high 1
		0, 0, 0, 20, // one jump offset
		0x05, 0xbd, 0, 9, // iconst_2, anewarray
		0x59, 0x03, opLdc, byte(first), 0x53, // dup, iconst_0, ldc, aastore
		0x59, 0x04, opLdcW, byte(second >> 8), byte(second), 0x53, // dup, iconst_1, ldc_w, aastore
		opInvokestatic, 0, 1,
		opWide, opIinc, 0, 1, 0, 1, // wide iinc
		opLdc, byte(accessor), // a later run: field names for accessors
		opInvokestatic, 0, 2,
		0xb1, // return
	}
	got, err := Class(cb.build(code))
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.True(t, proto.Equal(want, got), "got %v", got)
}

func TestClassWithoutDescriptorIsNil(t *testing.T) {
	cb := newClassBuilder()
	s := cb.str([]byte("not a descriptor"))
	got, err := Class(cb.build([]byte{opLdc, byte(s), opInvokestatic, 0, 1, 0xb1}))
	require.NoError(t, err)
	assert.Nil(t, got)
}

func TestClassRejectsGarbage(t *testing.T) {
	_, err := Class([]byte("PK\x03\x04 not a class"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "magic")

	cb := newClassBuilder()
	full := cb.build([]byte{0xb1})
	_, err = Class(full[:len(full)-9])
	require.ErrorIs(t, err, classfile.ErrTruncated)
}

func TestClassReportsUnknownOpcode(t *testing.T) {
	cb := newClassBuilder()
	_, err := Class(cb.build([]byte{0xcb}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown opcode 0xcb")
}

func TestDecodeModifiedUTF8RejectsWideChars(t *testing.T) {
	_, err := decodeModifiedUTF8([]byte{0xE2, 0x82, 0xAC}) // U+20AC, three bytes
	require.Error(t, err)
	got, err := decodeModifiedUTF8([]byte{'a', 0xC0, 0x80, 0xC3, 0xBF})
	require.NoError(t, err)
	assert.Equal(t, []byte{'a', 0, 0xFF}, got)
}
