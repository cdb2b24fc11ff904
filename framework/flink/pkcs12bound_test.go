package flink

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The walk over a store's encoding is bounded and never fails on what is not a store (the decoder
// reports that): deep nesting, indefinite lengths without an end, lengths past the end, random
// bytes. A count that is not a positive number is refused; one inside an indefinite length is found.
func TestCheckPKCS12RoundsIsBounded(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x30, 0x80}, 10000), 0, 0)
	for name, data := range map[string][]byte{
		"deep":          deep,
		"no end":        {0x30, 0x80, 0x04, 0x01, 0x00},
		"past the end":  {0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x00},
		"empty":         nil,
		"one byte":      {0x30},
		"primitive ind": {0x04, 0x80, 0, 0},
	} {
		most, err := checkPKCS12Rounds(data)
		assert.NoError(t, err, name)
		assert.Zero(t, most, name)
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(200))
		r.Read(b)
		_, _ = checkPKCS12Rounds(b) // no panic, no hang
	}
	// SEQUENCE (indefinite) { OCTET STRING salt, INTEGER n } end-of-contents.
	params := func(n ...byte) []byte {
		b := []byte{0x30, 0x80, 0x04, 0x02, 0xaa, 0xbb, 0x02, byte(len(n))}
		return append(append(b, n...), 0, 0)
	}
	most, err := checkPKCS12Rounds(params(0x08, 0x00))
	assert.NoError(t, err)
	assert.EqualValues(t, 2048, most)
	_, err = checkPKCS12Rounds(params(0xff))
	assert.ErrorContains(t, err, "not a positive number")
	_, err = checkPKCS12Rounds(params(0x00))
	assert.ErrorContains(t, err, "not a positive number")
	_, err = checkPKCS12Rounds(params(0x7f, 0xff, 0xff, 0xff))
	assert.ErrorContains(t, err, "2147483647 rounds")
	_, err = checkPKCS12Rounds(params(0x01, 0, 0, 0, 0, 0, 0, 0, 0))
	assert.ErrorContains(t, err, "more than 2^56 rounds")
	// Inside an OCTET STRING that holds encoded structure, as a bag's parameters are.
	inner := params(0x7f, 0xff, 0xff)
	wrapped := append([]byte{0x30, byte(len(inner) + 2), 0x04, byte(len(inner))}, inner...)
	_, err = checkPKCS12Rounds(wrapped)
	assert.ErrorContains(t, err, "8388607 rounds")
}
