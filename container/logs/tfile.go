package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf16"
)

// An aggregated log file of the TFile format (LogAggregationTFileController, Hadoop's default) is a
// BCFile: a 16-byte magic, data blocks, meta blocks, a meta index, and a fixed trailer
//
//	... | meta index | int64 offset of the meta index | uint16 major, uint16 minor | magic
//
// The meta index names the meta blocks; "BCFile.index" lists the data blocks (offset, stored size,
// raw size) and their compression ("none", "gz" = zlib, "lzo" unsupported here). Inside the data
// blocks, records follow each other: a key (vint length + bytes) and a value in chunks (vint n: n < 0
// means -n bytes and more chunks follow; n >= 0 means the last n bytes). A record never spans data
// blocks. The keys are Java writeUTF strings (uint16 length + modified UTF-8): "VERSION",
// "APPLICATION_ACL", "APPLICATION_OWNER", then one per container id. A container's value is a
// sequence of (writeUTF file name, writeUTF decimal length, the bytes).
//
// The layout was learned from Hadoop's BCFile, TFile and AggregatedLogFormat; this is our own
// reader, tested against files the real NodeManager wrote (TestTFileMatchesHadoopLogsCLI).

var bcfileMagic = [16]byte{0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50}

// ErrNotTFile is returned for a file that is not a BCFile (e.g. an indexed-format file).
var ErrNotTFile = errors.New("not a TFile (BCFile magic missing)")

// LogFile is one container log file inside an aggregated file.
type LogFile struct {
	Container string
	Name      string // stdout, stderr, launch_container.sh, ...
	Length    int64
}

// maxTFileBlocks is the most data blocks a TFile may list (24 MiB of index in memory). The
// NodeManager starts a new data block only after about 256 KiB, so this is a file of some 256 GiB;
// and as every block holds at least one byte of its own (checkDataBlocks), no file lists more blocks
// than it has bytes (docs/security.md#aggregated-log-files, TestCraftedLogFilesAreBounded).
const maxTFileBlocks = 1 << 20

// blockRegion is where a block lies in the file.
type blockRegion struct {
	offset, stored, raw int64
}

// TFile is an open aggregated log file of the TFile format.
type TFile struct {
	r       io.ReaderAt
	size    int64
	codec   string
	blocks  []blockRegion
	Owner   string // APPLICATION_OWNER
	Version int32  // the VERSION record (1 in Hadoop 3.x)
}

// OpenTFile reads the trailer and the data block index of an aggregated TFile of size bytes.
func OpenTFile(r io.ReaderAt, size int64) (*TFile, error) {
	const trailer = 8 + 4 + 16
	if size < 16+trailer {
		return nil, ErrNotTFile
	}
	var tail [trailer]byte
	if _, err := r.ReadAt(tail[:], size-trailer); err != nil {
		return nil, fmt.Errorf("reading the trailer: %w", err)
	}
	if !bytes.Equal(tail[12:], bcfileMagic[:]) {
		return nil, ErrNotTFile
	}
	if major := binary.BigEndian.Uint16(tail[8:10]); major != 1 {
		return nil, fmt.Errorf("BCFile version %d.%d: only 1.x is known", major, binary.BigEndian.Uint16(tail[10:12]))
	}
	metaOff := int64(binary.BigEndian.Uint64(tail[:8]))
	if metaOff < 16 || metaOff >= size-trailer {
		return nil, fmt.Errorf("BCFile meta index offset %d outside the file (size %d)", metaOff, size)
	}
	meta := bufio.NewReader(io.NewSectionReader(r, metaOff, size-trailer-metaOff))
	n, err := readVLong(meta)
	if err != nil || n < 0 || n > 1<<16 {
		return nil, fmt.Errorf("BCFile meta index: bad entry count %d (%v)", n, err)
	}
	var index *blockRegion
	var indexCodec string
	for i := int64(0); i < n; i++ {
		name, err := readTString(meta)
		if err != nil {
			return nil, fmt.Errorf("BCFile meta index entry %d: %w", i, err)
		}
		codec, err := readTString(meta)
		if err != nil {
			return nil, fmt.Errorf("BCFile meta index entry %q: %w", name, err)
		}
		reg, err := readRegion(meta)
		if err != nil {
			return nil, fmt.Errorf("BCFile meta index entry %q: %w", name, err)
		}
		if name == "data:BCFile.index" {
			index, indexCodec = &reg, codec
		}
	}
	if index == nil {
		return nil, errors.New("BCFile has no data index (meta block BCFile.index)")
	}
	t := &TFile{r: r, size: size}
	ir, err := t.block(*index, indexCodec)
	if err != nil {
		return nil, fmt.Errorf("BCFile data index: %w", err)
	}
	defer ir.Close()
	br := bufio.NewReader(ir)
	if t.codec, err = readTString(br); err != nil {
		return nil, fmt.Errorf("BCFile data index: %w", err)
	}
	nb, err := readVLong(br)
	if err != nil || nb < 0 {
		return nil, fmt.Errorf("BCFile data index: bad block count %d (%v)", nb, err)
	}
	if room := metaOff - 16; nb > maxTFileBlocks || nb > room {
		return nil, fmt.Errorf("BCFile data index: %d data blocks claimed; a file of %d bytes holds at most %d (and yarn-am reads at most %d; docs/security.md#aggregated-log-files)", nb, size, max(room, 0), maxTFileBlocks)
	}
	for i := int64(0); i < nb; i++ {
		reg, err := readRegion(br)
		if err != nil {
			return nil, fmt.Errorf("BCFile data index block %d: %w", i, err)
		}
		t.blocks = append(t.blocks, reg)
	}
	if err := checkDataBlocks(t.blocks, *index, metaOff); err != nil {
		return nil, fmt.Errorf("BCFile data index: %w", err)
	}
	return t, nil
}

// checkDataBlocks makes sure the data blocks lie between the magic at the start and the meta index,
// hold at least one byte each, and share no byte with each other or with the data index: the
// NodeManager writes them one after the other, and shared bytes would let a small file print the
// same (compressed) content many times over.
func checkDataBlocks(blocks []blockRegion, index blockRegion, metaOff int64) error {
	sorted := append([]blockRegion{index}, blocks...)
	for i, b := range sorted {
		what := fmt.Sprintf("data block %d", i-1)
		if i == 0 {
			what = "the data index"
		}
		if b.offset < 16 || b.stored < 1 || b.stored > metaOff-b.offset {
			return fmt.Errorf("%s (%d bytes at %d) lies outside the data area (%d-%d) or is empty", what, b.stored, b.offset, 16, metaOff)
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].offset < sorted[j].offset })
	for i := 1; i < len(sorted); i++ {
		if p := sorted[i-1]; sorted[i].offset < p.offset+p.stored {
			return fmt.Errorf("blocks at %d (%d bytes) and %d overlap", p.offset, p.stored, sorted[i].offset)
		}
	}
	return nil
}

func readRegion(r io.ByteReader) (blockRegion, error) {
	var reg blockRegion
	var err error
	if reg.offset, err = readVLong(r); err != nil {
		return reg, err
	}
	if reg.stored, err = readVLong(r); err != nil {
		return reg, err
	}
	if reg.raw, err = readVLong(r); err != nil {
		return reg, err
	}
	if reg.offset < 0 || reg.stored < 0 || reg.raw < 0 {
		return reg, fmt.Errorf("negative block region %+v", reg)
	}
	return reg, nil
}

// block returns the uncompressed content of a block.
func (t *TFile) block(reg blockRegion, codec string) (io.ReadCloser, error) {
	return t.blockWith(reg, codec, &decoders{})
}

// decoders are the readers a walk reuses from block to block (and IFile from log file to log
// file): a file of many small blocks would otherwise allocate some 64 KiB of fresh buffers and
// inflate state for every few bytes it holds (TestManySmallBlocksAreCheap).
type decoders struct {
	peek *bufio.Reader
	z    io.ReadCloser // a zlib reader, reset for each stream
	g    *gzip.Reader
	recs *bufio.Reader // the records of a TFile block
}

// zlib returns a zlib reader of r, reusing the previous one.
func (d *decoders) zlib(r io.Reader) (io.ReadCloser, error) {
	if d.z != nil {
		if err := d.z.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
		return d.z, nil
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	d.z = z
	return z, nil
}

func (t *TFile) blockWith(reg blockRegion, codec string, d *decoders) (io.ReadCloser, error) {
	if reg.offset+reg.stored > t.size {
		return nil, fmt.Errorf("block at %d of %d bytes runs past the end of the file (%d bytes)", reg.offset, reg.stored, t.size)
	}
	sec := sectionOf(t.r, reg.offset, reg.stored)
	switch codec {
	case "none":
		return io.NopCloser(sec), nil
	case "gz":
		// Hadoop's TFile "gz" is its DefaultCodec: a zlib stream. Accept a gzip one too.
		if d.peek == nil {
			d.peek = bufio.NewReader(sec)
		} else {
			d.peek.Reset(sec)
		}
		head, err := d.peek.Peek(2)
		if err != nil {
			return nil, unexpected(err)
		}
		if head[0] == 0x1f && head[1] == 0x8b {
			if d.g == nil {
				g, err := gzip.NewReader(d.peek)
				if err != nil {
					return nil, err
				}
				d.g = g
				return g, nil
			}
			return d.g, d.g.Reset(d.peek)
		}
		return d.zlib(d.peek)
	default:
		return nil, fmt.Errorf("compression %q is not supported (only none and gz; set yarn.nodemanager.log-aggregation.compression-type to none or gz, or read these logs with Hadoop's `yarn logs`)", codec)
	}
}

// AppOwner is the application's owner recorded in the file (known once Walk has read the first
// records).
func (t *TFile) AppOwner() string { return t.Owner }

// Walk calls fn for every container log file, in file order, with a reader of exactly its bytes;
// fn may read all, part or none of it. The VERSION, APPLICATION_ACL and APPLICATION_OWNER records
// fill t.Version and t.Owner. fn returning an error stops the walk with that error.
func (t *TFile) Walk(fn func(f LogFile, content io.Reader) error) error {
	d := &decoders{recs: bufio.NewReaderSize(nil, 64<<10)}
	for i, reg := range t.blocks {
		rc, err := t.blockWith(reg, t.codec, d)
		if err != nil {
			return fmt.Errorf("data block %d: %w", i, err)
		}
		lr := &io.LimitedReader{R: rc, N: reg.raw}
		d.recs.Reset(lr)
		err = t.walkBlock(d.recs, fn)
		if err == nil {
			err = atEnd(lr, rc, "the block")
		}
		rc.Close()
		if err != nil {
			return fmt.Errorf("data block %d: %w", i, err)
		}
	}
	return nil
}

func (t *TFile) walkBlock(r *bufio.Reader, fn func(LogFile, io.Reader) error) error {
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return nil
		}
		klen, err := readVLong(r)
		if err != nil {
			return fmt.Errorf("record key length: %w", err)
		}
		if klen < 2 || klen > 1<<16+2 {
			return fmt.Errorf("record key length %d out of range", klen)
		}
		kb := make([]byte, klen)
		if _, err := io.ReadFull(r, kb); err != nil {
			return fmt.Errorf("record key: %w", err)
		}
		key, err := javaUTF(kb)
		if err != nil {
			return fmt.Errorf("record key: %w", err)
		}
		v := &chunkReader{r: r}
		switch key {
		case "VERSION":
			var b [4]byte
			if _, err := io.ReadFull(v, b[:]); err == nil {
				t.Version = int32(binary.BigEndian.Uint32(b[:]))
			}
		case "APPLICATION_OWNER":
			if s, err := readUTF(v); err == nil {
				t.Owner = s
			}
		case "APPLICATION_ACL":
		default:
			if err := walkContainer(key, v, fn); err != nil {
				return err
			}
		}
		if err := v.drain(); err != nil {
			return fmt.Errorf("record %q: %w", key, err)
		}
	}
}

func walkContainer(container string, v *chunkReader, fn func(LogFile, io.Reader) error) error {
	for {
		name, err := readUTF(v)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("container %s: log file name: %w", container, err)
		}
		ls, err := readUTF(v)
		if err != nil {
			return fmt.Errorf("container %s, %s: length: %w", container, name, err)
		}
		n, err := strconv.ParseInt(ls, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("container %s, %s: length %q is not a size", container, name, ls)
		}
		content := &io.LimitedReader{R: v, N: n}
		if err := fn(LogFile{Container: container, Name: name, Length: n}, content); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, content); err != nil {
			return fmt.Errorf("container %s, %s: %w", container, name, err)
		}
		if content.N > 0 {
			return fmt.Errorf("container %s, %s: %d of %d bytes missing", container, name, content.N, n)
		}
	}
}

// chunkReader reads a chunked TFile value.
type chunkReader struct {
	r      *bufio.Reader
	remain int64 // bytes left in the current chunk
	last   bool  // the current chunk is the last
	begun  bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for c.remain == 0 {
		if c.begun && c.last {
			return 0, io.EOF
		}
		n, err := readVLong(c.r)
		if err != nil {
			return 0, fmt.Errorf("value chunk length: %w", unexpected(err))
		}
		c.begun = true
		if n < 0 {
			c.remain = -n
		} else {
			c.remain, c.last = n, true
		}
	}
	if int64(len(p)) > c.remain {
		p = p[:c.remain]
	}
	n, err := c.r.Read(p)
	c.remain -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (c *chunkReader) drain() error {
	_, err := io.Copy(io.Discard, c)
	return err
}

// atEnd checks that a reader limited to the size the index gives (lr over r) was read to its
// limit and that r ends there: a block or log file shorter or longer than its index says is damage,
// not a silent short (or cut) log. Reading r's end also makes a zlib stream check its checksum.
func atEnd(lr *io.LimitedReader, r io.Reader, what string) error {
	if lr.N > 0 {
		return fmt.Errorf("%s ends %d bytes before the size its index gives", what, lr.N)
	}
	var one [1]byte
	n, err := r.Read(one[:])
	for i := 0; n == 0 && err == nil; i++ {
		if i == 100 { // as bufio gives up on a reader that keeps returning nothing
			return fmt.Errorf("%s: %w", what, io.ErrNoProgress)
		}
		n, err = r.Read(one[:])
	}
	switch {
	case n > 0:
		return fmt.Errorf("%s holds more bytes than its index gives", what)
	case err == io.EOF:
		return nil
	default:
		return err
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readVLong decodes Hadoop TFile's variable-length integer (org.apache.hadoop.io.file.tfile.Utils,
// not WritableUtils): one byte for -32..127, else a first byte that encodes the length and the top
// bits, followed by 1 to 8 big-endian bytes.
func readVLong(r io.ByteReader) (int64, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	first := int64(int8(b))
	if first >= -32 {
		return first, nil
	}
	next := func(n int) (uint64, error) {
		var v uint64
		for i := 0; i < n; i++ {
			c, err := r.ReadByte()
			if err != nil {
				return 0, unexpected(err)
			}
			v = v<<8 | uint64(c)
		}
		return v, nil
	}
	switch (first + 128) / 8 {
	case 7, 8, 9, 10, 11:
		v, err := next(1)
		return (first+52)<<8 | int64(v), err
	case 3, 4, 5, 6:
		v, err := next(2)
		return (first+88)<<16 | int64(v), err
	case 1, 2:
		v, err := next(3)
		return (first+112)<<24 | int64(v), err
	default:
		n := int(first + 129)
		if n < 4 || n > 8 {
			return 0, fmt.Errorf("corrupt vlong (first byte %#x)", b)
		}
		v, err := next(n)
		if err != nil {
			return 0, err
		}
		// sign-extend from n bytes
		shift := uint(64 - 8*n)
		return int64(v<<shift) >> shift, nil
	}
}

// readTString reads TFile's string: vint length (-1 = null) and UTF-8 bytes.
func readTString(r *bufio.Reader) (string, error) {
	n, err := readVLong(r)
	if err != nil {
		return "", unexpected(err)
	}
	if n == -1 {
		return "", nil
	}
	if n < 0 || n > 1<<20 {
		return "", fmt.Errorf("string length %d out of range", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", unexpected(err)
	}
	return string(b), nil
}

// readUTF reads a Java DataOutput.writeUTF string; io.EOF only if no byte at all was left.
func readUTF(r io.Reader) (string, error) {
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", unexpected(err)
	}
	return decodeModifiedUTF8(b)
}

// javaUTF decodes a whole writeUTF record (the TFile keys).
func javaUTF(b []byte) (string, error) {
	if len(b) < 2 || int(binary.BigEndian.Uint16(b)) != len(b)-2 {
		return "", fmt.Errorf("not a writeUTF string (%d bytes)", len(b))
	}
	return decodeModifiedUTF8(b[2:])
}

// decodeModifiedUTF8 turns Java's modified UTF-8 into a Go string: NUL is 0xC0 0x80 and characters
// beyond the BMP are surrogate pairs of 3 bytes each. Plain ASCII (every container id and log file
// name YARN writes) is returned as is.
func decodeModifiedUTF8(b []byte) (string, error) {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	var u16 []uint16
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			u16 = append(u16, uint16(c))
			i++
		case c&0xe0 == 0xc0 && i+1 < len(b):
			u16 = append(u16, uint16(c&0x1f)<<6|uint16(b[i+1]&0x3f))
			i += 2
		case c&0xf0 == 0xe0 && i+2 < len(b):
			u16 = append(u16, uint16(c&0x0f)<<12|uint16(b[i+1]&0x3f)<<6|uint16(b[i+2]&0x3f))
			i += 3
		default:
			return "", fmt.Errorf("bad modified UTF-8 at byte %d", i)
		}
	}
	return string(utf16.Decode(u16)), nil
}

// sectionOf reads n bytes at off. A file that can seek (an HDFS file) is read sequentially from
// there: reading it through ReadAt would set up a new DataNode read for every buffer.
func sectionOf(r io.ReaderAt, off, n int64) io.Reader {
	if rs, ok := r.(io.ReadSeeker); ok {
		return &seekSection{rs: rs, off: off, n: n}
	}
	return io.NewSectionReader(r, off, n)
}

type seekSection struct {
	rs     io.ReadSeeker
	off, n int64
	sought bool
}

func (s *seekSection) Read(p []byte) (int, error) {
	if !s.sought {
		if _, err := s.rs.Seek(s.off, io.SeekStart); err != nil {
			return 0, err
		}
		s.sought = true
	}
	if s.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.n {
		p = p[:s.n]
	}
	n, err := s.rs.Read(p)
	s.n -= int64(n)
	if err == io.EOF && s.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
