package classfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The writer builds small class files for code yarn-am hands a JVM without a Java compiler on the
// machine (framework/flink/flinkdist's delegation-token jar). It writes version 49 (Java 5): the JVM
// checks such a class with the type-inference verifier (JVMS §4.10.2), so no StackMapTable is needed;
// the code it writes is straight-line, without branches or exception handlers. Every limit of the
// format is an error from Bytes, never a panic.

// ClassVersion is the major version the writer writes: Java 5, the last one verified by type inference.
const ClassVersion = 49

// Access flags of classes and methods (JVMS §4.1, §4.6).
const (
	AccPublic = 0x0001
	AccStatic = 0x0008
	AccFinal  = 0x0010
	AccSuper  = 0x0020
)

// maxPoolCount is the largest constant_pool_count (a u2); the pool's indexes run from 1 to one less.
const maxPoolCount = 0xFFFF

// maxCode is the exclusive bound on a method's code_length (JVMS §4.7.3).
const maxCode = 65536

// maxUtf8 is the largest CONSTANT_Utf8 length in bytes (a u2).
const maxUtf8 = 0xFFFF

// ClassBuilder is a class file being written: a public final class with its constant pool and its
// methods. Its first error sticks and is returned by Bytes.
type ClassBuilder struct {
	pool    []byte            // the entries, in order
	count   int               // the next pool index
	index   map[string]uint16 // an entry's tag and content → its index, so each is written once
	this    uint16
	super   uint16
	ifaces  []uint16
	methods [][]byte
	err     error
}

// NewClass starts a public final class named name (the internal form, java/lang/Object) that
// extends super and implements interfaces.
func NewClass(name, super string, interfaces ...string) *ClassBuilder {
	b := &ClassBuilder{count: 1, index: map[string]uint16{}}
	b.this = b.class(name)
	b.super = b.class(super)
	if len(interfaces) > 0xFFFF {
		b.fail(fmt.Errorf("class %s: %d interfaces, the format allows 65535", bounded(name), len(interfaces)))
	}
	for _, i := range interfaces {
		b.ifaces = append(b.ifaces, b.class(i))
	}
	return b
}

func (b *ClassBuilder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// bounded quotes at most 80 bytes of s for an error message.
func bounded(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// entry returns the pool index of the entry with tag and body, adding it on first use.
func (b *ClassBuilder) entry(tag byte, body []byte) uint16 {
	key := string(append([]byte{tag}, body...))
	if i, ok := b.index[key]; ok {
		return i
	}
	if b.count >= maxPoolCount {
		b.fail(fmt.Errorf("constant pool full: the format allows %d entries", maxPoolCount-1))
		return 0
	}
	i := uint16(b.count)
	b.count++
	b.pool = append(append(b.pool, tag), body...)
	b.index[key] = i
	return i
}

func (b *ClassBuilder) u2entry(tag byte, refs ...uint16) uint16 {
	var body []byte
	for _, r := range refs {
		body = binary.BigEndian.AppendUint16(body, r)
	}
	return b.entry(tag, body)
}

func (b *ClassBuilder) utf8(s string) uint16 {
	m, err := modifiedUTF8(s)
	if err != nil {
		b.fail(err)
		return 0
	}
	return b.entry(tagUtf8, append(binary.BigEndian.AppendUint16(nil, uint16(len(m))), m...))
}

func (b *ClassBuilder) class(name string) uint16 {
	if err := checkClassName(name); err != nil {
		b.fail(err)
		return 0
	}
	return b.u2entry(tagClass, b.utf8(name))
}

func (b *ClassBuilder) nameAndType(name, desc string) uint16 {
	return b.u2entry(tagNameAndType, b.utf8(name), b.utf8(desc))
}

func (b *ClassBuilder) member(tag byte, class, name, desc string) uint16 {
	return b.u2entry(tag, b.class(class), b.nameAndType(name, desc))
}

func (b *ClassBuilder) str(s string) uint16 { return b.u2entry(tagString, b.utf8(s)) }

// Method adds a method with the given access flags, name and descriptor ("(I)V"), whose code the
// code function writes. maxStack and maxLocals are the method's operand-stack depth and local
// variables (the receiver and the parameters included), as the JVM checks them.
func (b *ClassBuilder) Method(access uint16, name, desc string, maxStack, maxLocals uint16, code func(*Code)) {
	params, _, err := parseMethodDesc(desc)
	if err != nil {
		b.fail(fmt.Errorf("method %s: %w", bounded(name), err))
		return
	}
	if access&AccStatic == 0 {
		params++ // this
	}
	if params > int(maxLocals) {
		b.fail(fmt.Errorf("method %s%s: max locals %d, the parameters take %d", bounded(name), desc, maxLocals, params))
		return
	}
	if len(b.methods) == 0xFFFF {
		b.fail(fmt.Errorf("class: more than 65535 methods"))
		return
	}
	nameIdx, descIdx := b.utf8(name), b.utf8(desc)
	c := &Code{cls: b, maxLocals: maxLocals}
	code(c)
	if c.err != nil {
		b.fail(fmt.Errorf("method %s%s: %w", bounded(name), desc, c.err))
		return
	}
	if len(c.b) == 0 || len(c.b) >= maxCode {
		b.fail(fmt.Errorf("method %s%s: %d bytes of code, want 1 to %d", bounded(name), desc, len(c.b), maxCode-1))
		return
	}
	var m []byte
	m = binary.BigEndian.AppendUint16(m, access)
	m = binary.BigEndian.AppendUint16(m, nameIdx)
	m = binary.BigEndian.AppendUint16(m, descIdx)
	m = binary.BigEndian.AppendUint16(m, 1) // one attribute: Code
	m = binary.BigEndian.AppendUint16(m, b.utf8("Code"))
	m = binary.BigEndian.AppendUint32(m, uint32(2+2+4+len(c.b)+2+2))
	m = binary.BigEndian.AppendUint16(m, maxStack)
	m = binary.BigEndian.AppendUint16(m, maxLocals)
	m = binary.BigEndian.AppendUint32(m, uint32(len(c.b)))
	m = append(m, c.b...)
	m = append(m, 0, 0, 0, 0) // no exception table, no attributes of the code
	b.methods = append(b.methods, m)
}

// Bytes returns the class file, or the first error met while building it.
func (b *ClassBuilder) Bytes() ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	out := binary.BigEndian.AppendUint32(nil, 0xCAFEBABE)
	out = binary.BigEndian.AppendUint16(out, 0) // minor
	out = binary.BigEndian.AppendUint16(out, ClassVersion)
	out = binary.BigEndian.AppendUint16(out, uint16(b.count))
	out = append(out, b.pool...)
	out = binary.BigEndian.AppendUint16(out, AccPublic|AccFinal|AccSuper)
	out = binary.BigEndian.AppendUint16(out, b.this)
	out = binary.BigEndian.AppendUint16(out, b.super)
	out = binary.BigEndian.AppendUint16(out, uint16(len(b.ifaces)))
	for _, i := range b.ifaces {
		out = binary.BigEndian.AppendUint16(out, i)
	}
	out = binary.BigEndian.AppendUint16(out, 0) // no fields
	out = binary.BigEndian.AppendUint16(out, uint16(len(b.methods)))
	for _, m := range b.methods {
		out = append(out, m...)
	}
	return binary.BigEndian.AppendUint16(out, 0), nil // no class attributes
}

// Code is a method's bytecode being written, one instruction per call. Its first error (a local
// variable past max locals, a malformed descriptor) sticks and fails the method.
type Code struct {
	cls       *ClassBuilder
	maxLocals uint16
	b         []byte
	err       error
}

// Opcodes the writer emits (JVMS §6.5), beside the reader's.
const (
	opIconstM1  = 0x02
	opBipush    = 0x10
	opSipush    = 0x11
	opAload     = 0x19
	opAload0    = 0x2a
	opAstore    = 0x3a
	opAstore0   = 0x4b
	opDup       = 0x59
	opLadd      = 0x61
	opIreturn   = 0xac
	opAreturn   = 0xb0
	opReturn    = 0xb1
	opNew       = 0xbb
	opAnewarray = 0xbd
)

func (c *Code) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *Code) op(op byte, operands ...byte) { c.b = append(append(c.b, op), operands...) }

func (c *Code) u2op(op byte, v uint16) { c.b = binary.BigEndian.AppendUint16(append(c.b, op), v) }

// local writes a load or store of local n: the one-byte form for 0 to 3, else the indexed one,
// widened past 255.
func (c *Code) local(short, indexed byte, n uint16) {
	switch {
	case n >= c.maxLocals:
		c.fail(fmt.Errorf("local %d past max locals %d", n, c.maxLocals))
	case n <= 3:
		c.op(short + byte(n))
	case n <= 0xFF:
		c.op(indexed, byte(n))
	default:
		c.op(opWide, indexed)
		c.b = binary.BigEndian.AppendUint16(c.b, n)
	}
}

// Aload pushes the reference in local n.
func (c *Code) Aload(n uint16) { c.local(opAload0, opAload, n) }

// Astore pops a reference into local n.
func (c *Code) Astore(n uint16) { c.local(opAstore0, opAstore, n) }

// Iconst pushes the int v (iconst_<v>, bipush or sipush); v must fit in 16 bits.
func (c *Code) Iconst(v int) {
	switch {
	case v >= -1 && v <= 5:
		c.op(byte(opIconstM1 + v + 1))
	case v >= -128 && v <= 127:
		c.op(opBipush, byte(int8(v)))
	case v >= -32768 && v <= 32767:
		c.u2op(opSipush, uint16(int16(v)))
	default:
		c.fail(fmt.Errorf("iconst %d: want -32768 to 32767", v))
	}
}

// New pushes a new, not yet initialized, object of class.
func (c *Code) New(class string) { c.u2op(opNew, c.cls.class(class)) }

// Anewarray pops a length and pushes a new array of that many references of class.
func (c *Code) Anewarray(class string) { c.u2op(opAnewarray, c.cls.class(class)) }

// Dup duplicates the top of the stack.
func (c *Code) Dup() { c.op(opDup) }

// Ladd pops two longs and pushes their sum.
func (c *Code) Ladd() { c.op(opLadd) }

// LdcString pushes the string constant s (ldc, or ldc_w past pool index 255).
func (c *Code) LdcString(s string) {
	i := c.cls.str(s)
	if i <= 0xFF {
		c.op(opLdc, byte(i))
		return
	}
	c.u2op(opLdcW, i)
}

func (c *Code) invoke(op byte, tag byte, class, name, desc string) (params int) {
	params, _, err := parseMethodDesc(desc)
	if err != nil {
		c.fail(fmt.Errorf("%s.%s: %w", bounded(class), bounded(name), err))
		return 0
	}
	c.u2op(op, c.cls.member(tag, class, name, desc))
	return params
}

// Invokestatic calls the static method class.name of descriptor desc.
func (c *Code) Invokestatic(class, name, desc string) {
	c.invoke(opInvokestatic, tagMethodref, class, name, desc)
}

// Invokespecial calls the constructor, private or super method class.name of descriptor desc.
func (c *Code) Invokespecial(class, name, desc string) {
	c.invoke(opInvokespecial, tagMethodref, class, name, desc)
}

// Invokevirtual calls the instance method class.name of descriptor desc.
func (c *Code) Invokevirtual(class, name, desc string) {
	c.invoke(opInvokevirtual, tagMethodref, class, name, desc)
}

// Invokeinterface calls the interface method class.name of descriptor desc; its count operand (the
// receiver and the arguments, in stack slots) comes from desc.
func (c *Code) Invokeinterface(class, name, desc string) {
	params := c.invoke(opInvokeinterface, tagInterfaceMethodref, class, name, desc)
	if c.err == nil {
		c.b = append(c.b, byte(1+params), 0) // params ≤ 255 slots: parseMethodDesc bounds it
	}
}

// Areturn returns the reference on top of the stack.
func (c *Code) Areturn() { c.op(opAreturn) }

// Ireturn returns the int on top of the stack (a boolean is an int).
func (c *Code) Ireturn() { c.op(opIreturn) }

// Return returns from a void method.
func (c *Code) Return() { c.op(opReturn) }

// errDesc reports a malformed descriptor.
var errDesc = errors.New("malformed descriptor")

// parseMethodDesc reads a method descriptor "(params)ret" (JVMS §4.3.3) and returns the stack slots
// its parameters take (long and double take two) and its return type. A method's parameters may
// take at most 255 slots (JVMS §4.3.3), the receiver included; this counts them without it.
func parseMethodDesc(desc string) (slots int, ret string, err error) {
	if !strings.HasPrefix(desc, "(") {
		return 0, "", fmt.Errorf("%w %s: want (params)return", errDesc, bounded(desc))
	}
	rest := desc[1:]
	for !strings.HasPrefix(rest, ")") {
		n, wide, err := fieldType(rest)
		if err != nil {
			return 0, "", fmt.Errorf("%w %s: %v", errDesc, bounded(desc), err)
		}
		slots++
		if wide {
			slots++
		}
		rest = rest[n:]
	}
	if slots > 254 {
		return 0, "", fmt.Errorf("descriptor %s: parameters take %d slots, the format allows 254 beside the receiver", bounded(desc), slots)
	}
	ret = rest[1:]
	if ret != "V" {
		n, _, err := fieldType(ret)
		if err != nil || n != len(ret) {
			return 0, "", fmt.Errorf("%w %s: bad return type", errDesc, bounded(desc))
		}
	}
	return slots, ret, nil
}

// fieldType reads one field type at the start of s and returns its length and whether it takes
// two slots.
func fieldType(s string) (n int, wide bool, err error) {
	dims := 0
	for dims < len(s) && s[dims] == '[' {
		dims++
	}
	if dims > 255 {
		return 0, false, fmt.Errorf("more than 255 array dimensions")
	}
	if dims == len(s) {
		return 0, false, fmt.Errorf("ends inside a type")
	}
	switch s[dims] {
	case 'B', 'C', 'F', 'I', 'S', 'Z':
		return dims + 1, false, nil
	case 'J', 'D':
		return dims + 1, dims == 0, nil
	case 'L':
		end := strings.IndexByte(s[dims:], ';')
		if end < 0 {
			return 0, false, fmt.Errorf("class type without ';'")
		}
		if err := checkClassName(s[dims+1 : dims+end]); err != nil {
			return 0, false, err
		}
		return dims + end + 1, false, nil
	}
	return 0, false, fmt.Errorf("unknown type %q", s[dims])
}

// checkClassName accepts a class's internal name (java/lang/String) or an array type's descriptor
// ([Ljava/lang/String;), the two forms a CONSTANT_Class holds (JVMS §4.4.1).
func checkClassName(name string) error {
	if strings.HasPrefix(name, "[") {
		if n, _, err := fieldType(name); err != nil || n != len(name) {
			return fmt.Errorf("class %s: not an array descriptor", bounded(name))
		}
		return nil
	}
	if name == "" || strings.ContainsAny(name, ".;[") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return fmt.Errorf("class name %s: want an internal name such as java/lang/Object", bounded(name))
	}
	return nil
}

// modifiedUTF8 encodes s as a CONSTANT_Utf8's bytes (JVMS §4.4.7): U+0000 as two bytes, characters
// past U+FFFF as two three-byte surrogates.
func modifiedUTF8(s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("string %s is not valid UTF-8", bounded(s))
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r == 0:
			out = append(out, 0xC0, 0x80)
		case r > 0xFFFF:
			r -= 0x10000
			out = append3(out, 0xD800+(r>>10))
			out = append3(out, 0xDC00+(r&0x3FF))
		default:
			out = utf8.AppendRune(out, r)
		}
		if len(out) > maxUtf8 {
			return nil, fmt.Errorf("string %s: more than %d bytes in the class file's encoding", bounded(s), maxUtf8)
		}
	}
	return out, nil
}

// append3 appends a UTF-16 code unit as three bytes, the way CESU-8 writes a surrogate.
func append3(b []byte, u rune) []byte {
	return append(b, byte(0xE0|u>>12), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
}
