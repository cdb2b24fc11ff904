package classfile

import (
	"encoding/binary"
	"errors"
	"testing"
)

// class writes a class file with the given string constants in its pool, no fields, no methods.
func class(strs ...string) []byte {
	var pool []byte
	count := uint16(1)
	pool = append(pool, 7, 0, 1) // a CONSTANT_Class before them: skipped entries keep the indexes right
	count++
	pool = append(pool, 6, 0, 0, 0, 0, 0, 0, 0, 0) // a CONSTANT_Double: two slots
	count += 2
	for _, s := range strs {
		pool = append(pool, 1)
		pool = binary.BigEndian.AppendUint16(pool, uint16(len(s)))
		pool = append(pool, s...)
		utf := count
		count++
		pool = append(pool, 8)
		pool = binary.BigEndian.AppendUint16(pool, utf)
		count++
	}
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0xCAFEBABE)
	b = append(b, 0, 0, 0, 61)
	b = binary.BigEndian.AppendUint16(b, count)
	b = append(b, pool...)
	b = append(b, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) // flags, this, super, no interfaces, fields, methods
	return b
}

func TestStringConstantsInPoolOrder(t *testing.T) {
	cf, err := Parse(class("taskmanager.numberOfTaskSlots", "The number of parallel operator instances."))
	if err != nil {
		t.Fatal(err)
	}
	got := cf.StringConstants()
	if len(got) != 2 || string(got[0]) != "taskmanager.numberOfTaskSlots" || string(got[1]) != "The number of parallel operator instances." {
		t.Errorf("%q", got)
	}
	if cf.Clinit != nil {
		t.Error("a class without methods has a static initializer")
	}
	full := class("a.b")
	for n := 0; n < len(full); n++ {
		if _, err := Parse(full[:n]); err == nil {
			t.Fatalf("a class file cut at %d of %d bytes parsed", n, len(full))
		} else if n >= 4 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v, want ErrTruncated", n, err)
		}
	}
}

// Parse reads a class's name, superclass and interfaces, as NewClass wrote them; a file whose
// indexes name no class leaves them "".
func TestParseReadsTheNameAndSupertypes(t *testing.T) {
	b, err := NewClass("scala/Some", "scala/Option", "scala/Product", "java/io/Serializable").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if cf.Name != "scala/Some" || cf.Super != "scala/Option" || len(cf.Interfaces) != 2 ||
		cf.Interfaces[0] != "scala/Product" || cf.Interfaces[1] != "java/io/Serializable" {
		t.Errorf("name %q super %q interfaces %q", cf.Name, cf.Super, cf.Interfaces)
	}
	cf, err = Parse(class("a.b"))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Name != "" || cf.Super != "" || cf.Interfaces != nil {
		t.Errorf("this and super 0: name %q super %q interfaces %q", cf.Name, cf.Super, cf.Interfaces)
	}
}
