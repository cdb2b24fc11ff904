package logs

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"strconv"
)

// Builders of aggregated log files for the tests: TFiles and indexed-format (IFile) files put
// together byte by byte from the layouts described in tfile.go and ifile.go, so that a test can
// craft exactly the damage it is about.

// tVLong encodes a TFile vlong: one byte for -32..127, else the 8-byte length-coded form.
func tVLong(v int64) []byte {
	if v >= -32 && v <= 127 {
		return []byte{byte(int8(v))}
	}
	b := make([]byte, 9)
	b[0] = 0x87 // int8 -121: 8 bytes follow
	binary.BigEndian.PutUint64(b[1:], uint64(v))
	return b
}

func tString(s string) []byte { return append(tVLong(int64(len(s))), s...) }

// zlibBytes compresses at zlib's default level: BestCompression's lazy matching over the megabytes of a
// crafted index cost 38 s of CPU under -race (TestManySmallBlocksAreCheap's 3.7 MB index) for 0.15%
// fewer bytes; the files the tests read are byte for byte the same size at the default.
func zlibBytes(b []byte) []byte {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.DefaultCompression)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// writeUTF is Java's DataOutput.writeUTF of an ASCII string.
func writeUTF(s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
}

// tRecord is one TFile record: a writeUTF key and a value in one last chunk.
func tRecord(key string, value []byte) []byte {
	k := writeUTF(key)
	out := append(tVLong(int64(len(k))), k...)
	out = append(out, tVLong(int64(len(value)))...)
	return append(out, value...)
}

// tContainer is a container record's value: (name, decimal length, bytes) per log file.
func tContainer(files ...[2]string) []byte {
	var v []byte
	for _, f := range files {
		v = append(v, writeUTF(f[0])...)
		v = append(v, writeUTF(strconv.Itoa(len(f[1])))...)
		v = append(v, f[1]...)
	}
	return v
}

// tfileSpec says how to put a TFile together; index, when set, is the raw data index block
// (codec name, block count, regions) used instead of the one the blocks make.
type tfileSpec struct {
	codec  string   // "none" or "gz", of the data blocks and the index
	pre    []byte   // bytes right after the magic, before the blocks
	blocks [][]byte // raw data blocks (records)
	index  []byte
}

func buildTFile(s tfileSpec) []byte {
	out := append(append([]byte(nil), bcfileMagic[:]...), s.pre...)
	memo := map[string][]byte{} // blocks alike are compressed once
	enc := func(raw []byte) []byte {
		if s.codec != "gz" {
			return raw
		}
		if z, ok := memo[string(raw)]; ok {
			return z
		}
		memo[string(raw)] = zlibBytes(raw)
		return memo[string(raw)]
	}
	idx := s.index
	if idx == nil {
		idx = append(tString(s.codec), tVLong(int64(len(s.blocks)))...)
		for _, raw := range s.blocks {
			stored := enc(raw)
			idx = append(idx, tVLong(int64(len(out)))...)
			idx = append(idx, tVLong(int64(len(stored)))...)
			idx = append(idx, tVLong(int64(len(raw)))...)
			out = append(out, stored...)
		}
	}
	storedIdx := enc(idx)
	idxOff := len(out)
	out = append(out, storedIdx...)
	metaOff := len(out)
	out = append(out, tVLong(1)...)
	out = append(out, tString("data:BCFile.index")...)
	out = append(out, tString(s.codec)...)
	out = append(out, tVLong(int64(idxOff))...)
	out = append(out, tVLong(int64(len(storedIdx)))...)
	out = append(out, tVLong(int64(len(idx)))...)
	out = binary.BigEndian.AppendUint64(out, uint64(metaOff))
	out = append(out, 0, 1, 0, 0)
	return append(out, bcfileMagic[:]...)
}

// jw writes a Java serialization stream, numbering handles as the decoder does.
type jw struct {
	bytes.Buffer
	next int
}

func newJW() *jw {
	w := &jw{}
	w.Write([]byte{0xac, 0xed, 0, 5})
	return w
}

func (w *jw) handle() int  { w.next++; return w.next - 1 }
func (w *jw) utf(s string) { w.Write(writeUTF(s)) }
func (w *jw) str(s string) int {
	w.WriteByte(tcString)
	w.utf(s)
	return w.handle()
}
func (w *jw) ref(h int) {
	w.WriteByte(tcReference)
	w.Write(binary.BigEndian.AppendUint32(nil, uint32(baseHandle+h)))
}
func (w *jw) u32(v uint32) { w.Write(binary.BigEndian.AppendUint32(nil, v)) }
func (w *jw) u64(v uint64) { w.Write(binary.BigEndian.AppendUint64(nil, v)) }

// class writes a class descriptor with fields "<type><name>" (type J, I, F or L) and no super class
// (super, when set, writes it); it returns the descriptor's handle.
func (w *jw) class(name string, flags byte, fields []string, super func()) int {
	w.WriteByte(tcClassDesc)
	w.utf(name)
	w.u64(0)
	h := w.handle()
	w.WriteByte(flags)
	w.Write(binary.BigEndian.AppendUint16(nil, uint16(len(fields))))
	for _, f := range fields {
		w.WriteByte(f[0])
		w.utf(f[1:])
		if f[0] == 'L' {
			w.str("Ljava/lang/Object;")
		}
	}
	w.WriteByte(tcEndBlockData)
	if super == nil {
		w.WriteByte(tcNull)
	} else {
		super()
	}
	return h
}

// ifileMeta writes IndexedLogsMeta objects; it keeps the class handles so that later objects refer
// to them, as Java does.
type ifileMeta struct {
	w                                     *jw
	metaC, listC, cycleC, mapC, fileMetaC int
}

func newIFileMeta() *ifileMeta {
	return &ifileMeta{w: newJW(), metaC: -1, listC: -1, cycleC: -1, mapC: -1, fileMetaC: -1}
}

func (m *ifileMeta) obj(h *int, name string, flags byte, fields ...string) int {
	m.w.WriteByte(tcObject)
	if *h < 0 {
		*h = m.w.class(name, flags, fields, nil)
	} else {
		m.w.ref(*h)
	}
	return m.w.handle()
}

// list writes an ArrayList whose elements each writes.
func (m *ifileMeta) list(elems ...func()) int {
	h := m.obj(&m.listC, "java.util.ArrayList", 0x03, "Isize")
	m.w.u32(uint32(len(elems)))
	m.w.Write([]byte{tcBlockData, 4})
	m.w.u32(uint32(len(elems)))
	for _, e := range elems {
		e()
	}
	m.w.WriteByte(tcEndBlockData)
	return h
}

// meta writes the IndexedLogsMeta: its list of aggregation cycles is cycles.
func (m *ifileMeta) meta(codec string, cycles ...func()) {
	m.obj(&m.metaC, "org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.IndexedLogsMeta", 0x02,
		"LcompressName", "LlogMetas", "LnodeId", "Luser")
	m.w.str(codec)
	m.list(cycles...)
	m.w.str("127.0.0.2:1")
	m.w.str("alice")
}

// cycle writes one aggregation cycle: container id -> its file metas.
func (m *ifileMeta) cycle(containers map[string][]func()) int {
	h := m.obj(&m.cycleC, "org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.IndexedPerAggregationLogMeta", 0x02, "LlogMetas")
	m.obj(&m.mapC, "java.util.HashMap", 0x03, "FloadFactor", "Ithreshold")
	m.w.u32(0)
	m.w.u32(0)
	m.w.Write([]byte{tcBlockData, 8})
	m.w.u32(16)
	m.w.u32(uint32(len(containers)))
	for id, files := range containers {
		m.w.str(id)
		m.list(files...)
	}
	m.w.WriteByte(tcEndBlockData)
	return h
}

// file writes one file meta.
func (m *ifileMeta) file(name string, size, start, stored int64) int {
	h := m.obj(&m.fileMetaC, "org.apache.hadoop.yarn.logaggregation.filecontroller.ifile.IndexedFileLogMeta", 0x02,
		"JfileCompressedSize", "JfileSize", "JstartIndex", "LfileName")
	m.w.u64(uint64(stored))
	m.w.u64(uint64(size))
	m.w.u64(uint64(start))
	m.w.str(name)
	return h
}

// ifileID is the 32-byte id an indexed-format file starts and ends with.
var ifileID = []byte("0123456789abcdef0123456789abcdef")

// buildIFile frames content (the log files' stored bytes, which start at offset 32) and a meta.
func buildIFile(content, meta []byte) []byte {
	out := append([]byte(nil), ifileID...)
	out = append(out, content...)
	out = append(out, meta...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(meta)))
	return append(out, ifileID...)
}
