package yarnrpc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Credentials is the content of a Hadoop token storage file (HADOOP_TOKEN_FILE_LOCATION) or of a
// ContainerLaunchContext's tokens field: tokens and secret keys, each under an alias.
type Credentials struct {
	Tokens  map[string]Token
	Secrets map[string][]byte
}

// NewCredentials returns empty credentials.
func NewCredentials() *Credentials {
	return &Credentials{Tokens: map[string]Token{}, Secrets: map[string][]byte{}}
}

// TokenOfKind returns the first token (by alias) of the given kind, e.g. "YARN_AM_RM_TOKEN".
func (c *Credentials) TokenOfKind(kind string) (Token, bool) {
	for _, a := range slices.Sorted(maps.Keys(c.Tokens)) {
		if c.Tokens[a].Kind == kind {
			return c.Tokens[a], true
		}
	}
	return Token{}, false
}

// TokenFor returns the first token (by alias) of the given kind for service (the server's ip:port,
// e.g. TokenService of a NameNode). Nil credentials have none.
func (c *Credentials) TokenFor(kind, service string) (Token, bool) {
	if c == nil {
		return Token{}, false
	}
	for _, a := range c.Aliases() {
		if t := c.Tokens[a]; t.Kind == kind && t.Service == service {
			return t, true
		}
	}
	return Token{}, false
}

// The token storage format: "HDTS", a version byte, then the body. Version 0 is Hadoop's Writable
// layout (what Hadoop 3 writes); version 1 is a varint-delimited CredentialsProto.
const (
	tokenStorageMagic     = "HDTS"
	tokenStorageWritable  = 0
	tokenStorageProtobuf  = 1
	maxCredentialItemSize = 1 << 20 // no token, alias or secret is anywhere near 1 MiB
	maxCredentialItems    = 1 << 16
)

// ErrBadTokenFile is returned (wrapped) for a token storage file that cannot be parsed.
var ErrBadTokenFile = errors.New("not a valid Hadoop token storage file")

// MaxTokenFileBytes bounds a token storage file (HADOOP_TOKEN_FILE_LOCATION, a container's tokens):
// a real one holds a few tokens of a few hundred bytes each (docs/running.md#limits-on-input-files).
const MaxTokenFileBytes = 16 << 20

// ReadCredentialsFile reads a token storage file (HDTS version 0 or 1) through the bounded reader: a
// named pipe or a device in its place is refused, not read forever.
func ReadCredentialsFile(path string) (*Credentials, error) {
	data, err := boundedread.ReadFile("token file", path, "a Hadoop token storage file", MaxTokenFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	c, err := ParseCredentials(data)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials parses token storage bytes (HDTS version 0 or 1).
func ParseCredentials(data []byte) (*Credentials, error) {
	if len(data) < 5 || string(data[:4]) != tokenStorageMagic {
		return nil, fmt.Errorf("%w: missing HDTS header", ErrBadTokenFile)
	}
	body := data[5:]
	switch data[4] {
	case tokenStorageWritable:
		return parseWritableCredentials(bytes.NewReader(body))
	case tokenStorageProtobuf:
		var p hadooppb.CredentialsProto
		if err := protodelim.UnmarshalFrom(bufio.NewReader(bytes.NewReader(body)), &p); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTokenFile, err)
		}
		c := NewCredentials()
		for _, kv := range p.GetTokens() {
			t := kv.GetToken()
			c.Tokens[kv.GetAlias()] = Token{Identifier: t.GetIdentifier(), Password: t.GetPassword(), Kind: t.GetKind(), Service: t.GetService()}
		}
		for _, kv := range p.GetSecrets() {
			c.Secrets[kv.GetAlias()] = kv.GetSecret()
		}
		return c, nil
	default:
		return nil, fmt.Errorf("%w: unknown version %d (known: 0 and 1)", ErrBadTokenFile, data[4])
	}
}

// Marshal writes the credentials in HDTS version 0, the layout every Hadoop 2.x/3.x reader accepts.
// Entries are written in alias order so the output is deterministic.
func (c *Credentials) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(tokenStorageMagic)
	b.WriteByte(tokenStorageWritable)
	writeVLong(&b, int64(len(c.Tokens)))
	for _, alias := range slices.Sorted(maps.Keys(c.Tokens)) {
		t := c.Tokens[alias]
		writeText(&b, []byte(alias))
		writeText(&b, t.Identifier)
		writeText(&b, t.Password)
		writeText(&b, []byte(t.Kind))
		writeText(&b, []byte(t.Service))
	}
	writeVLong(&b, int64(len(c.Secrets)))
	for _, alias := range slices.Sorted(maps.Keys(c.Secrets)) {
		writeText(&b, []byte(alias))
		writeText(&b, c.Secrets[alias])
	}
	return b.Bytes()
}

// WriteFile writes the credentials (HDTS v0) with owner-only permissions.
func (c *Credentials) WriteFile(path string) error {
	return os.WriteFile(path, c.Marshal(), 0o600)
}

func parseWritableCredentials(r *bytes.Reader) (*Credentials, error) {
	bad := func(what string, err error) error {
		return fmt.Errorf("%w: %s: %w", ErrBadTokenFile, what, err)
	}
	c := NewCredentials()
	n, err := readCount(r)
	if err != nil {
		return nil, bad("token count", err)
	}
	for i := 0; i < n; i++ {
		var f [5][]byte // alias, identifier, password, kind, service
		for j := range f {
			if f[j], err = readText(r); err != nil {
				return nil, bad(fmt.Sprintf("token %d", i), err)
			}
		}
		c.Tokens[string(f[0])] = Token{Identifier: f[1], Password: f[2], Kind: string(f[3]), Service: string(f[4])}
	}
	if n, err = readCount(r); err != nil {
		return nil, bad("secret count", err)
	}
	for i := 0; i < n; i++ {
		alias, err := readText(r)
		if err != nil {
			return nil, bad(fmt.Sprintf("secret %d", i), err)
		}
		val, err := readText(r)
		if err != nil {
			return nil, bad(fmt.Sprintf("secret %d", i), err)
		}
		c.Secrets[string(alias)] = val
	}
	return c, nil
}

func readCount(r *bytes.Reader) (int, error) {
	n, err := readVLong(r)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > maxCredentialItems {
		return 0, fmt.Errorf("implausible count %d", n)
	}
	return int(n), nil
}

// readText reads a Hadoop Text / length-prefixed byte array: a VInt length, then the bytes.
func readText(r *bytes.Reader) ([]byte, error) {
	n, err := readVLong(r)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > maxCredentialItemSize || n > int64(r.Len()) {
		return nil, fmt.Errorf("implausible length %d", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return b, err
}

func writeText(w *bytes.Buffer, b []byte) {
	writeVLong(w, int64(len(b)))
	w.Write(b)
}

// writeVLong writes Hadoop's WritableUtils variable-length integer: values in [-112, 127] take one
// byte; otherwise a marker byte encodes the sign and the number of big-endian bytes that follow.
func writeVLong(w *bytes.Buffer, v int64) {
	if v >= -112 && v <= 127 {
		w.WriteByte(byte(v))
		return
	}
	marker := int64(-112)
	if v < 0 {
		v = ^v
		marker = -120
	}
	n := 0
	for t := v; t != 0; t >>= 8 {
		n++
	}
	w.WriteByte(byte(marker - int64(n)))
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	w.Write(buf[8-n:])
}

func readVLong(r *bytes.Reader) (int64, error) {
	first, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	fb := int8(first)
	if fb >= -112 {
		return int64(fb), nil
	}
	negative := fb < -120
	n := int(-112 - fb)
	if negative {
		n = int(-120 - fb)
	}
	var v uint64
	for i := 0; i < n; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		v = v<<8 | uint64(b)
	}
	if negative {
		return ^int64(v), nil
	}
	return int64(v), nil
}
