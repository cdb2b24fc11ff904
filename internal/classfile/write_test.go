package classfile

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// unhex reads hex digits, ignoring spaces and line breaks between them.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A class with only a constructor calling Object's, byte for byte (JVMS §4.1): the pool in the order
// the builder meets each constant, each written once (<init> and ()V serve the method and the call).
func TestWriterWritesAConstructorByteForByte(t *testing.T) {
	c := NewClass("A", "java/lang/Object")
	c.Method(AccPublic, "<init>", "()V", 1, 1, func(c *Code) {
		c.Aload(0)
		c.Invokespecial("java/lang/Object", "<init>", "()V")
		c.Return()
	})
	got, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		cafebabe 0000 0031 000a
		01 0001 41
		07 0001
		01 0010 `+hex.EncodeToString([]byte("java/lang/Object"))+`
		07 0003
		01 0006 `+hex.EncodeToString([]byte("<init>"))+`
		01 0003 `+hex.EncodeToString([]byte("()V"))+`
		0c 0005 0006
		0a 0004 0007
		01 0004 `+hex.EncodeToString([]byte("Code"))+`
		0031 0002 0004 0000 0000
		0001
		  0001 0005 0006 0001
		    0009 00000011 0001 0001 00000005 2a b70008 b1 0000 0000
		0000`)
	if !bytes.Equal(got, want) {
		t.Errorf("class file\n got %x\nwant %x", got, want)
	}
}

// What the writer writes, the package's reader reads back: the string constants in pool order,
// written once each, the static initializer's code byte for byte, and the runs of ldc the reader
// finds in it.
func TestWriterRoundTripsThroughTheReader(t *testing.T) {
	c := NewClass("yarnam/T", "java/lang/Object", "java/lang/Runnable")
	c.Method(AccPublic, "<init>", "()V", 1, 1, func(c *Code) {
		c.Aload(0)
		c.Invokespecial("java/lang/Object", "<init>", "()V")
		c.Return()
	})
	c.Method(AccPublic, "run", "()V", 0, 1, func(c *Code) { c.Return() })
	var clinit []byte
	c.Method(AccStatic, "<clinit>", "()V", 4, 0, func(c *Code) {
		c.LdcString("a.key")
		c.LdcString("nul\x00 and \U0001F600")
		c.Invokestatic("java/lang/String", "concat", "(Ljava/lang/String;)Ljava/lang/String;")
		c.LdcString("a.key")
		c.Invokeinterface("java/util/List", "add", "(ILjava/lang/Object;)V")
		c.Return()
		clinit = append([]byte(nil), c.b...)
	})
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	got := cf.StringConstants()
	// Modified UTF-8 (JVMS §4.4.7): NUL as C0 80, U+1F600 as the surrogates D83D DE00, three bytes each.
	want := [][]byte{[]byte("a.key"), append([]byte("nul\xc0\x80 and "), 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80)}
	if len(got) != len(want) || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
		t.Errorf("string constants %x, want %x", got, want)
	}
	if !bytes.Equal(cf.Clinit, clinit) {
		t.Errorf("<clinit> %x, want %x", cf.Clinit, clinit)
	}
	// ldc, ldc, invokestatic, ldc, invokeinterface with count 3 (the receiver, an int, an Object), return.
	if len(clinit) != 2+2+3+2+5+1 || clinit[9] != opInvokeinterface || clinit[12] != 3 || clinit[13] != 0 {
		t.Errorf("<clinit> %x: want invokeinterface ... 03 00 at 9", clinit)
	}
	runs, err := cf.LdcRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || len(runs[0]) != 2 || len(runs[1]) != 1 || string(runs[1][0]) != "a.key" {
		t.Errorf("ldc runs %q", runs)
	}
}

// Each instruction's encoding, the short and long forms included.
func TestCodeEncodings(t *testing.T) {
	for _, tc := range []struct {
		name string
		code func(*Code)
		want string
	}{
		{"aload_3", func(c *Code) { c.Aload(3) }, "2d"},
		{"aload 4", func(c *Code) { c.Aload(4) }, "1904"},
		{"wide aload", func(c *Code) { c.Aload(300) }, "c419012c"},
		{"astore_1", func(c *Code) { c.Astore(1) }, "4c"},
		{"astore 255", func(c *Code) { c.Astore(255) }, "3aff"},
		{"iconst_m1", func(c *Code) { c.Iconst(-1) }, "02"},
		{"iconst_0", func(c *Code) { c.Iconst(0) }, "03"},
		{"iconst_5", func(c *Code) { c.Iconst(5) }, "08"},
		{"bipush", func(c *Code) { c.Iconst(-128) }, "1080"},
		{"sipush", func(c *Code) { c.Iconst(1000) }, "1103e8"},
		{"dup ladd ireturn areturn return", func(c *Code) { c.Dup(); c.Ladd(); c.Ireturn(); c.Areturn(); c.Return() }, "5961acb0b1"},
		{"wide invokeinterface", func(c *Code) { c.Invokeinterface("I", "m", "(JD[J[[DLx/Y;)J") }, "b9000a0800"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewClass("A", "java/lang/Object")
			c := &Code{cls: b, maxLocals: 400}
			tc.code(c)
			if c.err != nil {
				t.Fatal(c.err)
			}
			if got := hex.EncodeToString(c.b); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

// Past the format's limits, and with names a JVM would refuse, Bytes returns an error naming what
// is wrong; nothing panics.
func TestWriterErrors(t *testing.T) {
	long := strings.Repeat("x", 0x10000)
	for _, tc := range []struct {
		name  string
		build func() *ClassBuilder
		want  string
	}{
		{"dotted class name", func() *ClassBuilder { return NewClass("java.lang.Object", "java/lang/Object") }, "internal name"},
		{"empty super", func() *ClassBuilder { return NewClass("A", "") }, "internal name"},
		{"bad array class", func() *ClassBuilder { return NewClass("A", "java/lang/Object", "[Lx") }, "array descriptor"},
		{"descriptor without parens", func() *ClassBuilder { return method("m", "V", 1, 1, func(c *Code) { c.Return() }) }, "malformed descriptor"},
		{"descriptor with an unknown type", func() *ClassBuilder { return method("m", "(Q)V", 2, 1, func(c *Code) { c.Return() }) }, "malformed descriptor"},
		{"descriptor with a bad return", func() *ClassBuilder { return method("m", "()VV", 1, 1, func(c *Code) { c.Return() }) }, "bad return type"},
		{"descriptor cut in a class", func() *ClassBuilder { return method("m", "(Ljava/lang/String", 2, 1, func(c *Code) { c.Return() }) }, "malformed descriptor"},
		{"too many parameter slots", func() *ClassBuilder {
			return method("m", "("+strings.Repeat("J", 128)+")V", 300, 1, func(c *Code) { c.Return() })
		}, "256 slots"},
		{"max locals under the parameters", func() *ClassBuilder { return method("m", "(JI)V", 1, 3, func(c *Code) { c.Return() }) }, "max locals 3, the parameters take 4"},
		{"local past max locals", func() *ClassBuilder { return method("m", "()V", 1, 1, func(c *Code) { c.Aload(1); c.Return() }) }, "local 1 past max locals 1"},
		{"iconst out of range", func() *ClassBuilder { return method("m", "()V", 1, 1, func(c *Code) { c.Iconst(40000); c.Return() }) }, "iconst 40000"},
		{"call with a bad descriptor", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) { c.Invokevirtual("A", "f", "(I"); c.Return() })
		}, "malformed descriptor"},
		{"call on a dotted class", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) { c.Invokestatic("java.lang.System", "gc", "()V"); c.Return() })
		}, "internal name"},
		{"no code", func() *ClassBuilder { return method("m", "()V", 1, 1, func(c *Code) {}) }, "0 bytes of code"},
		{"code of 64 KiB", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) {
				for i := 0; i < 0x10000; i++ {
					c.Return()
				}
			})
		}, "65536 bytes of code, want 1 to 65535"},
		{"invalid UTF-8", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) { c.LdcString("\xff"); c.Return() })
		}, "not valid UTF-8"},
		{"string past 65535 bytes", func() *ClassBuilder { return method("m", "()V", 1, 1, func(c *Code) { c.LdcString(long); c.Return() }) }, "more than 65535 bytes"},
		{"NULs past 65535 bytes encoded", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) { c.LdcString(strings.Repeat("\x00", 40000)); c.Return() })
		}, "more than 65535 bytes"},
		{"constant pool full", func() *ClassBuilder {
			return method("m", "()V", 1, 1, func(c *Code) {
				for i := 0; i < 40000; i++ {
					c.LdcString(strings.Repeat("k", i%7) + string(rune('a'+i%26)) + strings.Repeat("v", i/182))
				}
			})
		}, "constant pool full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.build().Bytes()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Bytes: %d bytes, error %v; want an error containing %q", len(b), err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes: quote a bounded prefix", len(err.Error()))
			}
		})
	}
}

// method is a class A with one public method.
func method(name, desc string, maxStack, maxLocals uint16, code func(*Code)) *ClassBuilder {
	c := NewClass("A", "java/lang/Object")
	c.Method(AccPublic, name, desc, maxStack, maxLocals, code)
	return c
}
