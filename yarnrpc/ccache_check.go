package yarnrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// checkCCache walks a ticket cache's structure (the MIT file format, versions 1 to 4, as gokrb5's
// credentials.CCache.Unmarshal reads it) and refuses one whose counts or lengths run past its end.
// gokrb5 trusts them: a count of addresses taken from the file goes straight into make, so a 1 KiB file
// asks for 36 GB and the process dies of "out of memory", which no recover catches; a count of name
// components loops 2^31 times. Validated first, every count is bounded by the bytes left
// (FuzzParseKerberosFiles).
func checkCCache(b []byte) error {
	c := ccCursor{b: b}
	if len(b) < 2 || b[0] != 5 {
		return errors.New("not a ticket cache (its first byte is not 5)")
	}
	version := b[1]
	if version < 1 || version > 4 {
		return fmt.Errorf("ticket cache version %d; yarn-am reads versions 1 to 4", version)
	}
	c.p = 2
	c.e = binary.BigEndian
	if (version == 1 || version == 2) && nativeLittleEndian() {
		c.e = binary.LittleEndian
	}
	if version == 4 {
		// As gokrb5 reads the header: fields while the position is within the header's length, each a
		// KDC offset of 8 bytes (any other is refused there).
		hlen := int(c.u16())
		for c.err == nil && c.p <= hlen {
			tag, flen := c.u16(), int(c.u16())
			c.skip(flen)
			if c.err == nil && (tag != 1 || flen != 8) {
				return errors.New("ticket cache header holds a field yarn-am does not know")
			}
		}
	}
	c.principal(version)
	for c.err == nil && c.p < len(b) {
		c.principal(version) // client
		c.principal(version) // server
		c.skip(2)            // key type
		if version == 3 {
			c.skip(2)
		}
		c.data()               // key
		c.skip(4*4 + 1 + 4)    // times, is-skey, flags
		for range c.count(6) { // addresses: type and data
			c.skip(2)
			c.data()
		}
		for range c.count(6) { // authorization data: type and data
			c.skip(2)
			c.data()
		}
		c.data() // ticket
		c.data() // second ticket
	}
	return c.err
}

// ccCursor reads a ticket cache; the first read past the end sets err and every later one is a no-op.
type ccCursor struct {
	b   []byte
	p   int
	e   binary.ByteOrder
	err error
}

func (c *ccCursor) need(n int) bool {
	if c.err == nil && (n < 0 || n > len(c.b)-c.p) {
		c.err = fmt.Errorf("ticket cache truncated or damaged at byte %d (wants %d more bytes, has %d)", c.p, n, len(c.b)-c.p)
	}
	return c.err == nil
}

func (c *ccCursor) skip(n int) {
	if c.need(n) {
		c.p += n
	}
}

func (c *ccCursor) u16() uint16 {
	if !c.need(2) {
		return 0
	}
	v := c.e.Uint16(c.b[c.p:])
	c.p += 2
	return v
}

func (c *ccCursor) i32() int {
	if !c.need(4) {
		return 0
	}
	v := int32(c.e.Uint32(c.b[c.p:]))
	c.p += 4
	return int(v)
}

// data skips a length-prefixed byte string.
func (c *ccCursor) data() { c.skip(c.i32()) }

// count reads a count of entries of at least min bytes each: one the rest of the file cannot hold is an
// error (and 0 entries to walk).
func (c *ccCursor) count(min int) int {
	n := c.i32()
	if c.err == nil && (n < 0 || n > (len(c.b)-c.p)/min) {
		c.err = fmt.Errorf("ticket cache damaged at byte %d: a count of %d entries that the %d bytes left cannot hold", c.p-4, n, len(c.b)-c.p)
	}
	if c.err != nil {
		return 0
	}
	return n
}

func (c *ccCursor) principal(version byte) {
	if version != 1 {
		c.skip(4) // name type
	}
	n := c.i32()
	if version == 1 {
		n-- // version 1 counts the realm among the components
	}
	c.data() // realm
	if c.err == nil && (n < 0 || n > (len(c.b)-c.p)/4) {
		c.err = fmt.Errorf("ticket cache damaged at byte %d: a principal of %d name components that the %d bytes left cannot hold", c.p, n, len(c.b)-c.p)
	}
	for i := 0; c.err == nil && i < n; i++ {
		c.data()
	}
}

// nativeLittleEndian is what gokrb5 asks for versions 1 and 2, which use the writer's byte order.
func nativeLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
