package flink

import (
	"errors"
	"fmt"
)

// A PKCS12 store names, in its own bytes, how many rounds of key derivation its MAC and each
// encrypted bag take (PKCS #12's MacData and PBE parameters, PBKDF2's iteration count), and the
// reader does them all before it can say whether the password was right: a store of the job's own
// REST TLS asking for 2³¹−1 rounds kept flink-jobmanager busy for hours. Java refuses
// more than 5,000,000 (its PKCS12 key store's limit), so a store above that is one the JobManager's
// JVM would refuse anyway; yarn-am refuses it before decoding, naming the key and the count
// (TestUserRESTClientRefusesAStoreOfTooManyRounds).

// maxPKCS12Iterations is the most key-derivation rounds a store may ask for: Java's own limit.
const maxPKCS12Iterations = 5_000_000

// Bounds of the walk over a store's encoding (a store is at most maxStore bytes).
const (
	maxBERDepth = 32
	maxBERNodes = 100_000
)

// checkPKCS12Rounds refuses a PKCS12 store that asks for more than maxPKCS12Iterations rounds of
// key derivation (or a count that is not a positive number), found without decoding anything
// secret: every INTEGER that follows an OCTET STRING (a salt) in a SEQUENCE, in the structure and in
// any OCTET STRING that holds encoded structure (the authenticated safe, its safe contents, the
// bags); encrypted content does not parse and is passed over. What is not a store at all is the
// decoder's to report. most is the largest count seen.
func checkPKCS12Rounds(data []byte) (most int64, err error) {
	w := &berWalk{}
	_, _ = w.elements(data, 0)
	return w.most, w.err
}

// berWalk walks BER (DER and the indefinite lengths some writers use) and keeps the largest count.
type berWalk struct {
	nodes int
	most  int64
	err   error // a count out of bounds: the walk stops
}

// berElement is one element: its tag (universal class only: 0 for others), whether it is
// constructed, and its content or children.
type berElement struct {
	universal   bool
	tag         int
	constructed bool
	content     []byte
	children    []berElement
}

const (
	berInteger     = 2
	berOctetString = 4
	berSequence    = 16
)

// elements parses all of data as a list of elements, checking every sequence's counts on the way.
func (w *berWalk) elements(data []byte, depth int) ([]berElement, error) {
	var out []berElement
	for len(data) > 0 && w.err == nil {
		e, rest, err := w.element(data, depth)
		if err != nil {
			return nil, err
		}
		if e == nil { // end of contents of an indefinite length
			return out, errEndOfContents{rest}
		}
		out = append(out, *e)
		data = rest
	}
	return out, nil
}

// errEndOfContents carries what follows an indefinite length's end-of-contents octets.
type errEndOfContents struct{ rest []byte }

func (errEndOfContents) Error() string { return "end-of-contents outside an indefinite length" }

// element parses one element at the start of data and returns what follows it (nil element: the
// end-of-contents octets).
func (w *berWalk) element(data []byte, depth int) (*berElement, []byte, error) {
	if depth > maxBERDepth {
		return nil, nil, errors.New("nested too deeply")
	}
	if w.nodes++; w.nodes > maxBERNodes {
		return nil, nil, errors.New("too many elements")
	}
	if len(data) < 2 {
		return nil, nil, errors.New("truncated")
	}
	if data[0] == 0 && data[1] == 0 {
		return nil, data[2:], nil
	}
	b := data[0]
	e := &berElement{universal: b>>6 == 0, constructed: b&0x20 != 0, tag: int(b & 0x1f)}
	i := 1
	if e.tag == 0x1f { // a tag number of several octets: never a universal one PKCS12 uses
		for i < len(data) && data[i]&0x80 != 0 {
			i++
		}
		i++
		e.universal, e.tag = false, 0
	}
	if i >= len(data) {
		return nil, nil, errors.New("truncated")
	}
	l := int(data[i])
	i++
	switch {
	case l == 0x80: // indefinite: children up to the end-of-contents octets
		if !e.constructed {
			return nil, nil, errors.New("an indefinite length on a primitive element")
		}
		children, err := w.elements(data[i:], depth+1)
		var end errEndOfContents
		if !errors.As(err, &end) {
			if err == nil && w.err != nil {
				return e, nil, nil // stopped at a count out of bounds
			}
			if err == nil {
				err = errors.New("an indefinite length without its end")
			}
			return nil, nil, err
		}
		e.children = children
		w.check(e)
		return e, end.rest, nil
	case l > 0x80:
		n := l & 0x7f
		if n > 4 || i+n > len(data) {
			return nil, nil, errors.New("a length out of bounds")
		}
		l = 0
		for _, c := range data[i : i+n] {
			l = l<<8 | int(c)
		}
		i += n
	}
	if l < 0 || l > len(data)-i {
		return nil, nil, errors.New("a length past the end")
	}
	e.content = data[i : i+l]
	rest := data[i+l:]
	switch {
	case e.constructed:
		children, err := w.elements(e.content, depth+1)
		if err != nil {
			return nil, nil, err
		}
		e.children = children
		w.check(e)
	case e.universal && e.tag == berOctetString && len(e.content) > 0 && e.content[0]&0x20 != 0:
		// Encoded structure, or ciphertext that happens to start like it: a failed parse is the latter.
		sub := &berWalk{nodes: w.nodes}
		if _, err := sub.elements(e.content, depth+1); err == nil || sub.err != nil {
			w.nodes = sub.nodes
			if sub.most > w.most {
				w.most = sub.most
			}
			if sub.err != nil {
				w.err = sub.err
			}
		}
	}
	return e, rest, nil
}

// check looks at a constructed element's children for a salt followed by a count.
func (w *berWalk) check(e *berElement) {
	if !e.universal || e.tag != berSequence {
		return
	}
	for i := 1; i < len(e.children) && w.err == nil; i++ {
		salt, count := e.children[i-1], e.children[i]
		if !salt.universal || salt.tag != berOctetString || !count.universal || count.tag != berInteger || count.constructed {
			continue
		}
		n, err := rounds(count.content)
		if err != nil {
			w.err = err
			return
		}
		if n > w.most {
			w.most = n
		}
		if n > maxPKCS12Iterations {
			w.err = fmt.Errorf("it asks for %d rounds of key derivation, more than the %d Java reads", n, maxPKCS12Iterations)
		}
	}
}

// rounds reads an iteration count: a positive INTEGER; one of more than eight octets is out of
// bounds whatever its value.
func rounds(b []byte) (int64, error) {
	if len(b) == 0 || b[0]&0x80 != 0 {
		return 0, errors.New("its iteration count is not a positive number")
	}
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) > 7 {
		return 0, fmt.Errorf("it asks for more than 2^56 rounds of key derivation, more than the %d Java reads", maxPKCS12Iterations)
	}
	var n int64
	for _, c := range b {
		n = n<<8 | int64(c)
	}
	if n < 1 {
		return 0, errors.New("its iteration count is not a positive number")
	}
	return n, nil
}
