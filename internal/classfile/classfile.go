// Package classfile reads the parts of a Java class file (JVMS §4) that yarn-am looks into without a
// JVM: the class's name and supertypes, the constant pool's strings and the bytecode of the static
// initializer. Hadoop's protobuf
// descriptors (yarnrpc/hadooppb/internal/hadoopjar: string literals of a static initializer) and Flink's
// configuration keys (framework/flink/flinkdist: string constants of its *Options classes) are read with it.
//
// It also writes small class files (write.go: NewClass, a ClassBuilder and its methods' Code), for the
// classes yarn-am hands a JVM where no Java compiler may be installed: framework/flink/flinkdist's
// delegation-token jar (TokenJar). The writer writes version 49 (Java 5) straight-line code, which the
// JVM verifies by type inference without a StackMapTable; every limit of the format is an error.
//
// The caller bounds the bytes it hands in; a class file's own counts are 16-bit, so nothing here
// grows past a small multiple of its input.
package classfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Constant-pool tags of the JVM class file format (JVMS §4.4).
const (
	tagUtf8               = 1
	tagInteger            = 3
	tagFloat              = 4
	tagLong               = 5
	tagDouble             = 6
	tagClass              = 7
	tagString             = 8
	tagFieldref           = 9
	tagMethodref          = 10
	tagInterfaceMethodref = 11
	tagNameAndType        = 12
	tagMethodHandle       = 15
	tagMethodType         = 16
	tagDynamic            = 17
	tagInvokeDynamic      = 18
	tagModule             = 19
	tagPackage            = 20
)

// ErrTruncated reports a class file that ends before its structure does.
var ErrTruncated = errors.New("class file truncated")

type reader struct {
	b   []byte
	off int
}

func (r *reader) u1() (uint8, error) {
	if r.off+1 > len(r.b) {
		return 0, ErrTruncated
	}
	v := r.b[r.off]
	r.off++
	return v, nil
}

func (r *reader) u2() (uint16, error) {
	if r.off+2 > len(r.b) {
		return 0, ErrTruncated
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v, nil
}

func (r *reader) u4() (uint32, error) {
	if r.off+4 > len(r.b) {
		return 0, ErrTruncated
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || r.off+n > len(r.b) {
		return nil, ErrTruncated
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v, nil
}

// File is the part of a class file yarn-am needs: its name and supertypes, the constant pool's
// strings and the bytecode of the static initializer.
type File struct {
	// utf8 holds the raw (modified UTF-8) bytes of each CONSTANT_Utf8 entry by pool index.
	utf8 map[uint16][]byte
	// strings maps the pool index of each CONSTANT_String to the index of its Utf8 entry.
	strings map[uint16]uint16
	// Clinit is the Code of <clinit>, nil when the class has no static initializer.
	Clinit []byte
	// Name is the class's own name (a/b/C), Super its superclass's ("" for java/lang/Object and
	// module-info) and Interfaces its direct interfaces', in the file's order; "" where the file's
	// index names no class.
	Name, Super string
	Interfaces  []string
}

// Parse reads a class file's name and supertypes, constant pool and static initializer.
func Parse(b []byte) (*File, error) {
	r := &reader{b: b}
	magic, err := r.u4()
	if err != nil {
		return nil, err
	}
	if magic != 0xCAFEBABE {
		return nil, fmt.Errorf("not a class file: magic %#x, want 0xcafebabe", magic)
	}
	if _, err := r.bytes(4); err != nil { // minor, major version
		return nil, err
	}
	count, err := r.u2()
	if err != nil {
		return nil, err
	}
	cf := &File{utf8: map[uint16][]byte{}, strings: map[uint16]uint16{}}
	classes := map[uint16]uint16{} // a CONSTANT_Class's pool index -> its name's Utf8 index
	for i := uint16(1); i < count; i++ {
		tag, err := r.u1()
		if err != nil {
			return nil, err
		}
		skip := 0
		switch tag {
		case tagUtf8:
			n, err := r.u2()
			if err != nil {
				return nil, err
			}
			if cf.utf8[i], err = r.bytes(int(n)); err != nil {
				return nil, err
			}
		case tagString:
			if cf.strings[i], err = r.u2(); err != nil {
				return nil, err
			}
		case tagClass:
			if classes[i], err = r.u2(); err != nil {
				return nil, err
			}
		case tagMethodType, tagModule, tagPackage:
			skip = 2
		case tagMethodHandle:
			skip = 3
		case tagInteger, tagFloat, tagFieldref, tagMethodref, tagInterfaceMethodref, tagNameAndType,
			tagDynamic, tagInvokeDynamic:
			skip = 4
		case tagLong, tagDouble:
			skip = 8
			i++ // these take two pool slots
		default:
			return nil, fmt.Errorf("constant pool entry %d: unknown tag %d", i, tag)
		}
		if _, err := r.bytes(skip); err != nil {
			return nil, err
		}
	}
	// The names stay "" where an index does not name a class: the constant-pool readers above
	// need no more than the pool.
	className := func(idx uint16) string {
		if u, ok := classes[idx]; ok {
			return string(cf.utf8[u])
		}
		return ""
	}
	if _, err := r.u2(); err != nil { // access flags
		return nil, err
	}
	this, err := r.u2()
	if err != nil {
		return nil, err
	}
	super, err := r.u2()
	if err != nil {
		return nil, err
	}
	cf.Name, cf.Super = className(this), className(super)
	nIfaces, err := r.u2()
	if err != nil {
		return nil, err
	}
	for j := 0; j < int(nIfaces); j++ {
		idx, err := r.u2()
		if err != nil {
			return nil, err
		}
		cf.Interfaces = append(cf.Interfaces, className(idx))
	}
	// Fields, then methods: same layout; only methods are looked into.
	for pass := 0; pass < 2; pass++ {
		n, err := r.u2()
		if err != nil {
			return nil, err
		}
		for j := 0; j < int(n); j++ {
			if _, err := r.u2(); err != nil { // access flags
				return nil, err
			}
			nameIdx, err := r.u2()
			if err != nil {
				return nil, err
			}
			if _, err := r.u2(); err != nil { // descriptor
				return nil, err
			}
			nAttrs, err := r.u2()
			if err != nil {
				return nil, err
			}
			for k := 0; k < int(nAttrs); k++ {
				attrName, err := r.u2()
				if err != nil {
					return nil, err
				}
				attrLen, err := r.u4()
				if err != nil {
					return nil, err
				}
				body, err := r.bytes(int(attrLen))
				if err != nil {
					return nil, err
				}
				if pass == 1 && string(cf.utf8[nameIdx]) == "<clinit>" && string(cf.utf8[attrName]) == "Code" {
					// max_stack u2, max_locals u2, code_length u4, code.
					if len(body) < 8 {
						return nil, ErrTruncated
					}
					codeLen := int(binary.BigEndian.Uint32(body[4:8]))
					if 8+codeLen > len(body) {
						return nil, ErrTruncated
					}
					cf.Clinit = body[8 : 8+codeLen]
				}
			}
		}
	}
	return cf, nil
}

// Opcodes the walker treats specially (JVMS §6.5).
const (
	opLdc             = 0x12
	opLdcW            = 0x13
	opTableswitch     = 0xaa
	opLookupswitch    = 0xab
	opInvokevirtual   = 0xb6
	opInvokespecial   = 0xb7
	opInvokestatic    = 0xb8
	opInvokeinterface = 0xb9
	opInvokedynamic   = 0xba
	opWide            = 0xc4
	opIinc            = 0x84
)

// opLen is the length in bytes (opcode included) of each fixed-length instruction; 0 marks the
// variable-length ones (tableswitch, lookupswitch, wide) and unused opcodes.
var opLen = func() [256]int {
	var t [256]int
	set := func(lo, hi, n int) {
		for op := lo; op <= hi; op++ {
			t[op] = n
		}
	}
	set(0x00, 0x0f, 1) // nop, constants
	set(0x10, 0x10, 2) // bipush
	set(0x11, 0x11, 3) // sipush
	set(0x12, 0x12, 2) // ldc
	set(0x13, 0x14, 3) // ldc_w, ldc2_w
	set(0x15, 0x19, 2) // loads with an index
	set(0x1a, 0x35, 1) // loads _n, array loads
	set(0x36, 0x3a, 2) // stores with an index
	set(0x3b, 0x83, 1) // stores _n, array stores, stack, arithmetic
	set(0x84, 0x84, 3) // iinc
	set(0x85, 0x98, 1) // conversions, comparisons
	set(0x99, 0xa8, 3) // branches, goto, jsr
	set(0xa9, 0xa9, 2) // ret
	set(0xac, 0xb1, 1) // returns
	set(0xb2, 0xb8, 3) // field access, invokevirtual/special/static
	set(0xb9, 0xba, 5) // invokeinterface, invokedynamic
	set(0xbb, 0xbb, 3) // new
	set(0xbc, 0xbc, 2) // newarray
	set(0xbd, 0xbd, 3) // anewarray
	set(0xbe, 0xbf, 1) // arraylength, athrow
	set(0xc0, 0xc1, 3) // checkcast, instanceof
	set(0xc2, 0xc3, 1) // monitorenter, monitorexit
	set(0xc5, 0xc5, 4) // multianewarray
	set(0xc6, 0xc7, 3) // ifnull, ifnonnull
	set(0xc8, 0xc9, 5) // goto_w, jsr_w
	return t
}()

// StringConstants returns the raw (modified UTF-8) bytes of every CONSTANT_String of the pool, in
// pool order: the string literals the class's code loads (a Java constant expression, such as a
// ConfigOption's key, is one of them).
func (cf *File) StringConstants() [][]byte {
	idx := make([]int, 0, len(cf.strings))
	for i := range cf.strings {
		idx = append(idx, int(i))
	}
	sort.Ints(idx)
	out := make([][]byte, 0, len(idx))
	for _, i := range idx {
		if u, ok := cf.utf8[cf.strings[uint16(i)]]; ok {
			out = append(out, u)
		}
	}
	return out
}

// LdcRuns returns the string constants that code loads with ldc/ldc_w, grouped into runs: a run ends
// at the next method invocation. protoc's Java output builds the descriptor as a String[] of literals
// and passes it straight to a call, so the descriptor is exactly one run.
func (cf *File) LdcRuns() ([][][]byte, error) {
	code := cf.Clinit
	var runs [][][]byte
	var cur [][]byte
	for pc := 0; pc < len(code); {
		op := int(code[pc])
		n := opLen[op]
		switch op {
		case opLdc, opLdcW:
			if pc+n > len(code) {
				return nil, ErrTruncated
			}
			idx := uint16(code[pc+1])
			if op == opLdcW {
				idx = binary.BigEndian.Uint16(code[pc+1:])
			}
			if u, ok := cf.strings[idx]; ok {
				cur = append(cur, cf.utf8[u])
			}
		case opInvokevirtual, opInvokespecial, opInvokestatic, opInvokeinterface, opInvokedynamic:
			if len(cur) > 0 {
				runs = append(runs, cur)
				cur = nil
			}
		case opTableswitch, opLookupswitch:
			p := pc + 1 + (3-pc%4+4)%4 // operands are 4-byte aligned from the method start
			if op == opTableswitch {
				if p+12 > len(code) {
					return nil, ErrTruncated
				}
				lo := int32(binary.BigEndian.Uint32(code[p+4:]))
				hi := int32(binary.BigEndian.Uint32(code[p+8:]))
				if hi < lo {
					return nil, fmt.Errorf("tableswitch at %d: high %d < low %d", pc, hi, lo)
				}
				n = p + 12 + 4*int(hi-lo+1) - pc
			} else {
				if p+8 > len(code) {
					return nil, ErrTruncated
				}
				pairs := int(binary.BigEndian.Uint32(code[p+4:]))
				n = p + 8 + 8*pairs - pc
			}
		case opWide:
			if pc+1 >= len(code) {
				return nil, ErrTruncated
			}
			n = 4
			if code[pc+1] == opIinc {
				n = 6
			}
		}
		if n <= 0 {
			return nil, fmt.Errorf("unknown opcode %#x at %d in <clinit>", op, pc)
		}
		pc += n
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs, nil
}
