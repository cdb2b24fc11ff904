package logs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// An aggregated log file of the indexed format (LogAggregationIndexedFileController, "IFile") is
//
//	id | the log files, each compressed on its own | meta | int32 length of meta | id
//
// where id is 36 bytes (a UUID string, Hadoop 3.1-3.2) or 32 bytes (a digest, 3.3+), the same at
// both ends, and meta is a Java-serialized IndexedLogsMeta: the compression name ("none" or "gz",
// zlib) and, per aggregation cycle, container id -> list of (file name, file size, compressed size,
// start offset in the file, modification time). Only the part of Java serialization those classes
// use is decoded here (objects, strings, enums, arrays, HashMap and ArrayList contents).
//
// Learned from Hadoop's LogAggregationIndexedFileController; our own reader, tested against files a
// real NodeManager wrote (TestIFileMatchesHadoopLogsCLI).

// Bounds on what a crafted file can make the reader do (docs/security.md#aggregated-log-files; each
// is pinned by TestCraftedLogFilesAreBounded). The application's owner writes these files, so
// `yarn-am logs` treats them as hostile: every count below is checked before the memory is spent.
const (
	// maxIFileMeta is the largest meta (the Java-serialized index at the end of the file): in the
	// NodeManager's own files (TestIFileMatchesHadoopLogsCLI's) each log file adds about 70 bytes
	// and 10 values to it, so 8 MiB indexes some 120,000 log files.
	maxIFileMeta = 8 << 20
	// maxIFileValues is how many serialized values (objects, strings, fields, array elements) the
	// meta may hold, some 100,000 log files' worth; it keeps decoding the meta to about 165 MB
	// allocated at worst (TestCraftedLogFilesAreBounded, a class of 65,535 fields).
	maxIFileValues = 1 << 20
	// maxIFileEntries is how many log files one node's file may index.
	maxIFileEntries = 1 << 17
	// maxJavaDepth is how deeply serialized objects may nest (IndexedLogsMeta nests 6 deep); it
	// keeps the recursive decoder's stack small.
	maxJavaDepth = 32
	// maxNameBytes is the longest container id or log file name printed: a log file name is a file
	// name on the NodeManager's disk (at most 255 bytes on Linux), container ids are about 40.
	maxNameBytes = 255
)

// IFile is an open aggregated log file of the indexed format.
type IFile struct {
	r     io.ReaderAt
	codec string
	files []ifileEntry
	Owner string
	Node  string
}

type ifileEntry struct {
	LogFile
	start, stored int64
}

// OpenIFile reads the trailer and the meta of an indexed-format file.
func OpenIFile(r io.ReaderAt, size int64) (*IFile, error) {
	var lastErr error = errors.New("file too short")
	for _, idLen := range []int64{32, 36} {
		if size < 2*idLen+4 {
			continue
		}
		head := make([]byte, idLen)
		tail := make([]byte, idLen+4)
		if _, err := r.ReadAt(head, 0); err != nil {
			return nil, err
		}
		if _, err := r.ReadAt(tail, size-idLen-4); err != nil {
			return nil, err
		}
		if !bytes.Equal(head, tail[4:]) {
			lastErr = fmt.Errorf("no indexed-format file: the %d-byte id at its start and end differ", idLen)
			continue
		}
		n := int64(binary.BigEndian.Uint32(tail[:4]))
		if n <= 0 || n > size-2*idLen-4 {
			return nil, fmt.Errorf("indexed-format meta length %d out of range (file %d bytes)", n, size)
		}
		if n > maxIFileMeta {
			return nil, fmt.Errorf("indexed-format meta of %d bytes: more than the %d bytes yarn-am reads (docs/security.md#aggregated-log-files)", n, maxIFileMeta)
		}
		meta := make([]byte, n)
		if _, err := r.ReadAt(meta, size-idLen-4-n); err != nil {
			return nil, err
		}
		f := &IFile{r: r}
		if err := f.decodeMeta(meta); err != nil {
			return nil, fmt.Errorf("indexed-format meta: %w", err)
		}
		if err := f.checkRegions(idLen, size-idLen-4-n); err != nil {
			return nil, fmt.Errorf("indexed-format meta: %w", err)
		}
		return f, nil
	}
	return nil, lastErr
}

func (f *IFile) decodeMeta(b []byte) error {
	d := &javaDecoder{r: bytes.NewReader(b)}
	root, err := d.decodeStream()
	if err != nil {
		return err
	}
	meta, ok := root.(*jObject)
	if !ok || !strings.HasSuffix(meta.class, "IndexedLogsMeta") {
		return fmt.Errorf("the serialized object is %s, not IndexedLogsMeta", describe(root))
	}
	f.codec, _ = meta.fields["compressName"].(string)
	f.Owner, _ = meta.fields["user"].(string)
	f.Node, _ = meta.fields["nodeId"].(string)
	if f.codec != "none" && f.codec != "gz" {
		return fmt.Errorf("compression %q is not supported (only none and gz; set %s to none or gz)", f.codec, KeyCompression)
	}
	// Each object is used once: a back-reference to a list already read would make a small meta
	// index the same log files over and over (TestCraftedLogFilesAreBounded, back-references).
	used := map[*jObject]bool{}
	once := func(v any, what string) (*jObject, error) {
		o, ok := v.(*jObject)
		if !ok {
			return nil, fmt.Errorf("%s is %s", what, describe(v))
		}
		if used[o] {
			return nil, fmt.Errorf("%s (a %s) appears more than once", what, o.class)
		}
		used[o] = true
		return o, nil
	}
	if _, err := once(meta.fields["logMetas"], "the list of log metas"); err != nil {
		return err
	}
	for _, cycle := range listOf(meta.fields["logMetas"]) {
		co, err := once(cycle, "a log meta")
		if err != nil {
			return err
		}
		if _, err := once(co.fields["logMetas"], "a log meta's map"); err != nil {
			return err
		}
		m := mapOf(co.fields["logMetas"])
		if n := len(listOf(co.fields["logMetas"])); n != 2*len(m) {
			return fmt.Errorf("a log meta's map of %d entries has %d containers: one appears twice, or a key is not a container id", n/2, len(m))
		}
		ids := make([]string, 0, len(m))
		for k := range m {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if len(id) > maxNameBytes {
				return fmt.Errorf("a container id of %d bytes (%.40q...): longer than %d", len(id), id, maxNameBytes)
			}
			if _, err := once(m[id], "the file list of "+id); err != nil {
				return err
			}
			for _, fm := range listOf(m[id]) {
				o, err := once(fm, "a file meta of "+id)
				if err != nil {
					return err
				}
				if len(f.files) == maxIFileEntries {
					return fmt.Errorf("more than %d log files indexed (docs/security.md#aggregated-log-files)", maxIFileEntries)
				}
				name, _ := o.fields["fileName"].(string)
				if len(name) > maxNameBytes {
					return fmt.Errorf("a log file name of %s of %d bytes (%.40q...): longer than %d", id, len(name), name, maxNameBytes)
				}
				size, _ := o.fields["fileSize"].(int64)
				start, _ := o.fields["startIndex"].(int64)
				stored, _ := o.fields["fileCompressedSize"].(int64)
				f.files = append(f.files, ifileEntry{LogFile{Container: id, Name: name, Length: size}, start, stored})
			}
		}
	}
	return nil
}

// checkRegions makes sure every log file's bytes lie between the id at the start and the meta, and
// that no two log files share bytes: the NodeManager writes them one after the other, and shared
// bytes would let a small file print the same (compressed) content many times over.
func (f *IFile) checkRegions(from, to int64) error {
	byStart := make([]*ifileEntry, len(f.files))
	for i := range f.files {
		e := &f.files[i]
		if e.start < from || e.stored < 0 || e.stored > to-e.start {
			return fmt.Errorf("%s of %s lies outside the file's log area (%d+%d, the area is %d-%d)", e.Name, e.Container, e.start, e.stored, from, to)
		}
		if e.Length < 0 {
			return fmt.Errorf("%s of %s has length %d", e.Name, e.Container, e.Length)
		}
		byStart[i] = e
	}
	sort.Slice(byStart, func(i, j int) bool { return byStart[i].start < byStart[j].start })
	end := from
	var prev *ifileEntry
	for _, e := range byStart {
		if e.stored == 0 {
			continue
		}
		if e.start < end {
			return fmt.Errorf("%s of %s (bytes %d+%d) overlaps %s of %s (ending at %d)", e.Name, e.Container, e.start, e.stored, prev.Name, prev.Container, end)
		}
		end, prev = e.start+e.stored, e
	}
	return nil
}

// AppOwner is the application's owner recorded in the meta.
func (f *IFile) AppOwner() string { return f.Owner }

// Walk calls fn for every container log file, with a reader of exactly its bytes.
func (f *IFile) Walk(fn func(LogFile, io.Reader) error) error {
	d := &decoders{}
	for _, e := range f.files {
		sec := sectionOf(f.r, e.start, e.stored)
		if err := f.walkOne(e, sec, d, fn); err != nil {
			return err
		}
	}
	return nil
}

func (f *IFile) walkOne(e ifileEntry, sec io.Reader, d *decoders, fn func(LogFile, io.Reader) error) error {
	rd := sec
	if f.codec == "gz" && e.stored > 0 {
		if d.peek == nil {
			d.peek = bufio.NewReader(sec)
		} else {
			d.peek.Reset(sec)
		}
		z, err := d.zlib(d.peek)
		if err != nil {
			return fmt.Errorf("%s of %s: %w", e.Name, e.Container, err)
		}
		rd = z
	}
	lr := &io.LimitedReader{R: rd, N: e.Length}
	if err := fn(e.LogFile, lr); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return fmt.Errorf("%s of %s: %w", e.Name, e.Container, err)
	}
	if lr.N > 0 {
		return fmt.Errorf("%s of %s: %d of %d bytes missing", e.Name, e.Container, lr.N, e.Length)
	}
	if err := atEnd(lr, rd, "the content"); err != nil {
		return fmt.Errorf("%s of %s: %w", e.Name, e.Container, err)
	}
	return nil
}

// Java object serialization (the subset the meta uses).

const (
	tcNull          = 0x70
	tcReference     = 0x71
	tcClassDesc     = 0x72
	tcObject        = 0x73
	tcString        = 0x74
	tcArray         = 0x75
	tcBlockData     = 0x77
	tcEndBlockData  = 0x78
	tcBlockDataLong = 0x7a
	tcLongString    = 0x7c
	tcEnum          = 0x7e
	baseHandle      = 0x7e0000
	scWriteMethod   = 0x01
)

type jField struct {
	typ  byte
	name string
}

type jClass struct {
	name   string
	flags  byte
	fields []jField
	super  *jClass
}

type jObject struct {
	class  string
	fields map[string]any
	annot  []any // objects and []byte block data written by writeObject methods, in order
}

type jBlock []byte

type javaDecoder struct {
	r       *bytes.Reader
	handles []any
	depth   int // nesting of content being read (maxJavaDepth)
	values  int // values read so far (maxIFileValues)
}

// count charges n values against the decoder's budget.
func (d *javaDecoder) count(n int) error {
	d.values += n
	if d.values > maxIFileValues {
		return fmt.Errorf("more than %d serialized values (docs/security.md#aggregated-log-files)", maxIFileValues)
	}
	return nil
}

func (d *javaDecoder) decodeStream() (any, error) {
	var head [4]byte
	if _, err := io.ReadFull(d.r, head[:]); err != nil {
		return nil, err
	}
	if head != [4]byte{0xac, 0xed, 0, 5} {
		return nil, fmt.Errorf("no Java serialization stream (starts % x)", head)
	}
	return d.content()
}

func (d *javaDecoder) u8() (byte, error) { return d.r.ReadByte() }

func (d *javaDecoder) n(k int) ([]byte, error) {
	b := make([]byte, k)
	_, err := io.ReadFull(d.r, b)
	return b, unexpected(err)
}

func (d *javaDecoder) utf() (string, error) {
	l, err := d.n(2)
	if err != nil {
		return "", err
	}
	b, err := d.n(int(binary.BigEndian.Uint16(l)))
	if err != nil {
		return "", err
	}
	return decodeModifiedUTF8(b)
}

func (d *javaDecoder) newHandle(v any) int {
	d.handles = append(d.handles, v)
	return len(d.handles) - 1
}

func (d *javaDecoder) ref() (any, error) {
	b, err := d.n(4)
	if err != nil {
		return nil, err
	}
	h := int(binary.BigEndian.Uint32(b)) - baseHandle
	if h < 0 || h >= len(d.handles) {
		return nil, fmt.Errorf("reference to unknown handle %#x", h+baseHandle)
	}
	return d.handles[h], nil
}

// content reads one element of a stream or an annotation.
func (d *javaDecoder) content() (any, error) {
	tc, err := d.u8()
	if err != nil {
		return nil, unexpected(err)
	}
	return d.contentOf(tc)
}

func (d *javaDecoder) contentOf(tc byte) (any, error) {
	if d.depth >= maxJavaDepth {
		return nil, fmt.Errorf("serialized objects nested more than %d deep", maxJavaDepth)
	}
	if err := d.count(1); err != nil {
		return nil, err
	}
	d.depth++
	defer func() { d.depth-- }()
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		return d.ref()
	case tcString:
		s, err := d.utf()
		if err != nil {
			return nil, err
		}
		d.newHandle(s)
		return s, nil
	case tcLongString:
		l, err := d.n(8)
		if err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint64(l)
		if n > uint64(d.r.Len()) {
			return nil, fmt.Errorf("long string of %d bytes past the end", n)
		}
		b, err := d.n(int(n))
		if err != nil {
			return nil, err
		}
		s, err := decodeModifiedUTF8(b)
		d.newHandle(s)
		return s, err
	case tcClassDesc:
		return d.classDesc(tc)
	case tcEnum:
		if _, err := d.classDescAny(); err != nil {
			return nil, err
		}
		h := d.newHandle(nil)
		name, err := d.content()
		if err != nil {
			return nil, err
		}
		s, _ := name.(string)
		d.handles[h] = s
		return s, nil
	case tcObject:
		return d.object()
	case tcArray:
		return d.array()
	case tcBlockData:
		l, err := d.u8()
		if err != nil {
			return nil, unexpected(err)
		}
		b, err := d.n(int(l))
		return jBlock(b), err
	case tcBlockDataLong:
		l, err := d.n(4)
		if err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(l)
		if int64(n) > int64(d.r.Len()) {
			return nil, fmt.Errorf("block data of %d bytes past the end", n)
		}
		b, err := d.n(int(n))
		return jBlock(b), err
	default:
		return nil, fmt.Errorf("unsupported serialization element %#x", tc)
	}
}

func (d *javaDecoder) classDescAny() (*jClass, error) {
	tc, err := d.u8()
	if err != nil {
		return nil, unexpected(err)
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		v, err := d.ref()
		if err != nil {
			return nil, err
		}
		c, ok := v.(*jClass)
		if !ok {
			return nil, fmt.Errorf("a class reference points to %s", describe(v))
		}
		return c, nil
	case tcClassDesc:
		return d.classDesc(tc)
	default:
		return nil, fmt.Errorf("unsupported class descriptor %#x", tc)
	}
}

func (d *javaDecoder) classDesc(byte) (*jClass, error) {
	name, err := d.utf()
	if err != nil {
		return nil, err
	}
	if _, err := d.n(8); err != nil { // serialVersionUID
		return nil, err
	}
	c := &jClass{name: name}
	d.newHandle(c)
	if c.flags, err = d.u8(); err != nil {
		return nil, unexpected(err)
	}
	nb, err := d.n(2)
	if err != nil {
		return nil, err
	}
	if err := d.count(int(binary.BigEndian.Uint16(nb))); err != nil {
		return nil, err
	}
	for i := 0; i < int(binary.BigEndian.Uint16(nb)); i++ {
		t, err := d.u8()
		if err != nil {
			return nil, unexpected(err)
		}
		fname, err := d.utf()
		if err != nil {
			return nil, err
		}
		if t == 'L' || t == '[' {
			if _, err := d.content(); err != nil { // the field's type name
				return nil, err
			}
		}
		c.fields = append(c.fields, jField{t, fname})
	}
	if _, err := d.annotations(); err != nil { // class annotation
		return nil, err
	}
	if c.super, err = d.classDescAny(); err != nil {
		return nil, err
	}
	// A super class that refers back to this class (itself, or through a class whose own super
	// class is this one) would make every object of it walk its class chain forever
	// (TestCraftedLogFilesAreBounded, self super class).
	depth := 0
	for k := c.super; k != nil; k = k.super {
		if k == c {
			return nil, fmt.Errorf("class %.80q is its own super class", c.name)
		}
		if depth++; depth > maxJavaDepth {
			return nil, fmt.Errorf("class %.80q has more than %d super classes", c.name, maxJavaDepth)
		}
	}
	return c, nil
}

// annotations reads contents up to TC_ENDBLOCKDATA.
func (d *javaDecoder) annotations() ([]any, error) {
	var out []any
	for {
		tc, err := d.u8()
		if err != nil {
			return nil, unexpected(err)
		}
		if tc == tcEndBlockData {
			return out, nil
		}
		v, err := d.contentOf(tc)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

func (d *javaDecoder) object() (any, error) {
	c, err := d.classDescAny()
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errors.New("an object without a class")
	}
	o := &jObject{class: c.name, fields: map[string]any{}}
	d.newHandle(o)
	var chain []*jClass
	for k := c; k != nil; k = k.super {
		chain = append([]*jClass{k}, chain...)
	}
	for _, k := range chain {
		// Each field's value is a value of the budget, primitive ones too: a class of 65,535
		// one-byte fields would otherwise fill a map entry per byte of the meta.
		if err := d.count(len(k.fields)); err != nil {
			return nil, err
		}
		for _, f := range k.fields {
			v, err := d.value(f.typ)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", k.name, f.name, err)
			}
			o.fields[f.name] = v
		}
		if k.flags&scWriteMethod != 0 {
			a, err := d.annotations()
			if err != nil {
				return nil, fmt.Errorf("%s data: %w", k.name, err)
			}
			o.annot = append(o.annot, a...)
		}
	}
	return o, nil
}

func (d *javaDecoder) array() (any, error) {
	c, err := d.classDescAny()
	if err != nil {
		return nil, err
	}
	if c == nil || len(c.name) < 2 {
		return nil, errors.New("an array without a class")
	}
	h := d.newHandle(nil)
	nb, err := d.n(4)
	if err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(nb))
	if n < 0 || n > d.r.Len() {
		return nil, fmt.Errorf("array of %d elements past the end", n)
	}
	if err := d.count(n); err != nil {
		return nil, err
	}
	out := make([]any, 0, min(n, 1024))
	for i := 0; i < n; i++ {
		v, err := d.value(c.name[1])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	d.handles[h] = out
	return out, nil
}

func (d *javaDecoder) value(t byte) (any, error) {
	var n int
	switch t {
	case 'L', '[':
		return d.content()
	case 'B', 'Z':
		n = 1
	case 'C', 'S':
		n = 2
	case 'I', 'F':
		n = 4
	case 'J', 'D':
		n = 8
	default:
		return nil, fmt.Errorf("unknown field type %q", t)
	}
	b, err := d.n(n)
	if err != nil {
		return nil, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	switch n {
	case 1:
		return int64(int8(v)), nil
	case 2:
		return int64(int16(v)), nil
	case 4:
		return int64(int32(v)), nil
	default:
		return int64(v), nil
	}
}

// listOf returns the elements of a serialized ArrayList (or any list written as size + elements).
func listOf(v any) []any {
	o, ok := v.(*jObject)
	if !ok {
		return nil
	}
	var out []any
	for _, a := range o.annot {
		if _, blk := a.(jBlock); !blk {
			out = append(out, a)
		}
	}
	return out
}

// mapOf returns the entries of a serialized HashMap with string keys.
func mapOf(v any) map[string]any {
	out := map[string]any{}
	items := listOf(v)
	for i := 0; i+1 < len(items); i += 2 {
		if k, ok := items[i].(string); ok {
			out[k] = items[i+1]
		}
	}
	return out
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case *jObject:
		return "a " + x.class
	default:
		return fmt.Sprintf("a %T", v)
	}
}
