package hadoopjar

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// decodeModifiedUTF8 turns a constant-pool string back into the bytes it was written from. protoc
// emits the descriptor as a Java string whose chars are the bytes (ISO-8859-1), so every char must be
// below 256; the class file stores them in the JVM's modified UTF-8 (NUL as 0xC0 0x80).
func decodeModifiedUTF8(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			out = append(out, c)
			i++
		case c&0xE0 == 0xC0 && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			r := rune(c&0x1F)<<6 | rune(b[i+1]&0x3F)
			if r > 0xFF {
				return nil, fmt.Errorf("char U+%04X at byte %d is not a descriptor byte (want < U+0100)", r, i)
			}
			out = append(out, byte(r))
			i += 2
		default:
			return nil, fmt.Errorf("byte %#x at %d is not a descriptor byte in modified UTF-8", c, i)
		}
	}
	return out, nil
}

// looksLikeDescriptorStart reports whether s can begin a serialized FileDescriptorProto: field 1
// (name, length-delimited) holding a name that ends in ".proto".
func looksLikeDescriptorStart(s []byte) bool {
	if len(s) < 2 || s[0] != 0x0A {
		return false
	}
	n, w := binary.Uvarint(s[1:])
	if w <= 0 || n == 0 || n > 1024 || 1+w+int(n) > len(s) {
		return false
	}
	return strings.HasSuffix(string(s[1+w:1+w+int(n)]), ".proto")
}
