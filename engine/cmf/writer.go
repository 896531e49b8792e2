package cmf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"easel/engine/quant"
)

// Options configures a Writer.
type Options struct {
	// HeadReserve is the space kept at the start of the file for the envelope, the header JSON and
	// the directory (rounded up to 4096; the weight blob starts there). 0 means
	// HeadReserveFor(ExpectedTensors, 64), cortiq's own choice. Close fails if the head outgrows it.
	HeadReserve int64
	// ExpectedTensors sizes the default HeadReserve; 0 means 4096 tensors.
	ExpectedTensors int
}

// HeadReserveFor is cortiq's head_reserve_for (cmf.md §6.3): room for the envelope, a directory of n
// tensors whose names average avgName bytes and a header JSON of up to about 1 MiB, tripled,
// page-aligned, and at least 1 MiB.
func HeadReserveFor(n, avgName int) int64 {
	head := int64(EnvelopeSize + dirPreambleSize + n*(dirRecordSize+6+avgName) + 1<<20)
	return max(alignUp(3*head, DataAlignment), 1<<20)
}

func alignUp[T int64 | uint64](x, a T) T { return (x + a - 1) / a * a }

// Writer streams a CMF file (cortiq's CmfStreamWriter, cmf.md §6.3): payloads are appended one at a
// time behind a reserved head, and Close writes the envelope, header JSON and directory into that
// head. The file is written as PATH.partial and renamed to PATH by a successful Close, so a crash
// or Abort never leaves a file under the final name.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	path, partial string
	file          *os.File
	out           *bufio.Writer
	dataOff       uint64
	cursor        uint64 // bytes of weight blob written, relative to dataOff
	entries       []Entry
	names         map[string]struct{}
	header        Header
	headerSet     bool
	vocab         []byte
	failed        error // sticky: after an I/O failure the file is only fit for Abort
	done          bool
}

// Create starts a new CMF file at path (written as path+".partial" until Close).
func Create(path string, opts Options) (*Writer, error) {
	reserve := opts.HeadReserve
	if reserve <= 0 {
		n := opts.ExpectedTensors
		if n <= 0 {
			n = 4096
		}
		reserve = HeadReserveFor(n, 64)
	}
	dataOff := alignUp(uint64(max(reserve, EnvelopeSize+1)), DataAlignment)
	partial := path + ".partial"
	file, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, &Error{Kind: ErrWrite, Path: path, Detail: err.Error(), Advice: "check that the folder exists and is writable"}
	}
	w := &Writer{path: path, partial: partial, file: file, out: bufio.NewWriterSize(file, 4<<20), dataOff: dataOff, names: map[string]struct{}{}}
	if err := w.zeros(dataOff); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// SetHeader sets the header JSON content. The writer fills in Format, Version and SectionHashes
// and derives required_features from the tensors, as cortiq does. Call it any time before Close;
// a header cortiq would refuse (an unknown QuantType, an empty Arch.Name, …) is refused here.
func (w *Writer) SetHeader(h Header) error {
	h.Format, h.Version, h.SectionHashes = "cmf", Version, nil
	if err := h.check(); err != nil {
		return &Error{Kind: ErrWrite, Path: w.path, Detail: err.Error(), Advice: "fix the header; nothing was written"}
	}
	if _, err := h.marshal(); err != nil {
		return &Error{Kind: ErrWrite, Path: w.path, Detail: err.Error(), Advice: "fix the header; nothing was written"}
	}
	w.header = h
	w.headerSet = true
	return nil
}

// SetVocab sets the vocab section: the tokenizer.json bytes, stored verbatim. The writer keeps the
// slice until Close.
func (w *Writer) SetVocab(tokenizerJSON []byte) { w.vocab = tokenizerJSON }

// AddTensor appends one tensor. The payload must be exactly the codec's size for dtype and shape
// (for u8, one byte per element); it is written out before AddTensor returns, so the caller may
// reuse it. A refused tensor leaves the writer usable.
func (w *Writer) AddTensor(name string, dtype quant.DType, shape []int, payload []byte) error {
	if err := w.check(name, dtype, shape, int64(len(payload))); err != nil {
		return err
	}
	if err := w.pad(uint64(len(payload))); err != nil {
		return err
	}
	if _, err := w.out.Write(payload); err != nil {
		return w.fail(err)
	}
	w.record(name, dtype, shape, uint64(len(payload)), Hash64(payload))
	return nil
}

// AddTensorFrom appends one tensor of size bytes read from r, so a payload never needs to be whole
// in memory. Reading fewer than size bytes fails the writer (the file must then be aborted).
func (w *Writer) AddTensorFrom(name string, dtype quant.DType, shape []int, size int64, r io.Reader) error {
	if err := w.check(name, dtype, shape, size); err != nil {
		return err
	}
	if err := w.pad(uint64(size)); err != nil {
		return err
	}
	var h Hasher
	src := &sourceReader{r: r}
	n, err := io.CopyN(io.MultiWriter(w.out, &h), src, size)
	if err != nil {
		if src.err != nil && src.err != io.EOF {
			// The source stopped (a cancelled conversion, an unreadable shard): not a disk problem.
			if w.failed == nil {
				w.failed = &Error{Kind: ErrWrite, Path: w.path, Tensor: name, Err: src.err,
					Detail: fmt.Sprintf("its source stopped after %d of %d bytes: %v", n, size, src.err)}
			}
			return w.failed
		}
		return w.fail(fmt.Errorf("tensor %q: wrote %d of %d bytes: %w", name, n, size, err))
	}
	w.record(name, dtype, shape, uint64(size), h.Sum64())
	return nil
}

// check refuses what cortiq's reader (or Easel's) would refuse, before a byte is written.
func (w *Writer) check(name string, dtype quant.DType, shape []int, size int64) error {
	if w.failed != nil {
		return w.failed
	}
	if w.done {
		return &Error{Kind: ErrWrite, Path: w.path, Tensor: name, Detail: "the writer is already closed"}
	}
	bad := func(format string, args ...any) error {
		return &Error{Kind: ErrWrite, Path: w.path, Tensor: name, Detail: fmt.Sprintf(format, args...), Advice: "this is a bug in the converter; the tensor was not written"}
	}
	switch {
	case name == "":
		return bad("empty tensor name")
	case len(name) > maxNameLen:
		return bad("name is %d bytes; the format allows %d", len(name), maxNameLen)
	case !utf8.ValidString(name):
		return bad("name is not valid UTF-8")
	case !dtype.Known():
		return bad("unknown dtype %s", dtype)
	case len(shape) > maxNDim:
		return bad("%d dimensions; the format allows %d", len(shape), maxNDim)
	}
	if _, dup := w.names[name]; dup {
		return bad("a tensor of this name was already added")
	}
	elems := int64(1)
	for _, d := range shape {
		if d < 0 || d > maxDim {
			return bad("dimension %d of shape %v does not fit the format's u32", d, shape)
		}
		if d != 0 && elems > (1<<62)/int64(d) {
			return bad("shape %v is too large", shape)
		}
		elems *= int64(d)
	}
	if dtype == quant.U8 {
		if size != elems {
			return bad("%d bytes for a u8 tensor of shape %v", size, shape)
		}
	} else if want, ok := quant.PayloadSize(dtype, shape); !ok {
		return bad("Easel cannot write %s tensors of shape %v (the payload size is not determined by the shape)", dtype, shape)
	} else if want != size {
		return bad("%d payload bytes, but %s%v needs exactly %d", size, dtype, shape, want)
	}
	poolLen := len(name)
	for i := range w.entries {
		poolLen += len(w.entries[i].Name)
	}
	if poolLen > maxPoolOffset {
		return bad("the tensor names exceed the directory's 4 GiB name pool")
	}
	return nil
}

// pad writes the zeros that bring the cursor to the payload's alignment: 4096 for payloads of
// 16 KiB or more, 64 otherwise (cortiq's writer convention).
func (w *Writer) pad(size uint64) error {
	align := uint64(TensorAlignment)
	if size >= LargeTensorMin {
		align = LargeTensorAlign
	}
	off := alignUp(w.cursor, align)
	if err := w.zeros(off - w.cursor); err != nil {
		return err
	}
	w.cursor = off
	return nil
}

func (w *Writer) record(name string, dtype quant.DType, shape []int, size, hash uint64) {
	w.entries = append(w.entries, Entry{Name: name, DType: dtype, Shape: append([]int(nil), shape...), Offset: w.cursor, Size: size, Hash: hash})
	w.names[name] = struct{}{}
	w.cursor += size
}

var zeroPage [64 << 10]byte

func (w *Writer) zeros(n uint64) error {
	for n > 0 {
		k := min(n, uint64(len(zeroPage)))
		if _, err := w.out.Write(zeroPage[:k]); err != nil {
			return w.fail(err)
		}
		n -= k
	}
	return nil
}

func (w *Writer) fail(err error) error {
	if w.failed == nil {
		w.failed = &Error{Kind: ErrWrite, Path: w.path, Detail: err.Error(), Err: err, Advice: "check the free disk space, then convert again"}
	}
	return w.failed
}

// sourceReader remembers the error of the reader a payload is copied from, so a failing source
// is told apart from a failing disk.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// Close appends the vocab section, writes the envelope, header JSON and directory into the
// reserved head, syncs, and renames the file into place. On failure the partial file is removed.
func (w *Writer) Close() error {
	if w.done {
		return w.failed
	}
	err := w.finish()
	if err != nil {
		w.Abort()
		return err
	}
	w.done = true
	return nil
}

func (w *Writer) finish() error {
	if w.failed != nil {
		return w.failed
	}
	if !w.headerSet {
		return &Error{Kind: ErrWrite, Path: w.path, Detail: "no header was set", Advice: "call SetHeader before Close"}
	}
	if _, err := w.out.Write(w.vocab); err != nil {
		return w.fail(err)
	}
	if err := w.out.Flush(); err != nil {
		return w.fail(err)
	}
	head, err := w.head()
	if err != nil {
		return err
	}
	if _, err := w.file.WriteAt(head, 0); err != nil {
		return w.fail(err)
	}
	if err := w.file.Sync(); err != nil {
		return w.fail(err)
	}
	if err := w.file.Close(); err != nil {
		return w.fail(err)
	}
	w.file = nil
	if err := os.Rename(w.partial, w.path); err != nil {
		return w.fail(err)
	}
	return nil
}

// head builds envelope + header JSON + directory for what has been written.
func (w *Writer) head() ([]byte, error) {
	h := w.header
	h.Format, h.Version, h.SectionHashes = "cmf", Version, nil
	if len(w.vocab) > 0 {
		h.SectionHashes = &SectionHashes{Vocab: fmt.Sprintf("%016x", Hash64(w.vocab))}
	}
	if err := h.check(); err != nil {
		return nil, &Error{Kind: ErrWrite, Path: w.path, Detail: err.Error(), Advice: "this is a bug in the converter"}
	}
	headerJSON, err := h.marshal()
	if err != nil {
		return nil, &Error{Kind: ErrWrite, Path: w.path, Detail: err.Error(), Advice: "this is a bug in the converter"}
	}
	dir := encodeDirectory(w.entries)
	headLen := uint64(EnvelopeSize + len(headerJSON) + len(dir))
	if headLen > w.dataOff {
		return nil, &Error{Kind: ErrWrite, Path: w.path,
			Detail: fmt.Sprintf("the header and directory need %d bytes but only %d were reserved before the tensors", headLen, w.dataOff),
			Advice: fmt.Sprintf("convert again with Options.HeadReserve of at least %d (or the right ExpectedTensors)", headLen)}
	}
	env := Envelope{
		Version:          Version,
		RequiredFeatures: deriveFeatures(w.entries),
		Header:           Section{EnvelopeSize, uint64(len(headerJSON))},
		Dir:              Section{EnvelopeSize + uint64(len(headerJSON)), uint64(len(dir))},
		Data:             Section{w.dataOff, w.cursor},
		HeaderHash:       Hash64(headerJSON),
		DirHash:          Hash64(dir),
	}
	if len(w.vocab) > 0 {
		env.Vocab = Section{w.dataOff + w.cursor, uint64(len(w.vocab))}
	}
	e := env.encode()
	out := make([]byte, 0, headLen)
	out = append(out, e[:]...)
	out = append(out, headerJSON...)
	return append(out, dir...), nil
}

// deriveFeatures sets the bits cortiq's derive_required_features sets for what Easel writes:
// TENSOR_DIR always, QUANT_2F when any tensor is q8_2f or vbit (no masks, skills or Prism records).
func deriveFeatures(entries []Entry) Features {
	f := FeatTensorDir
	for i := range entries {
		if entries[i].DType == quant.Q8_2F || entries[i].DType == quant.VBit {
			f |= FeatQuant2F
		}
	}
	return f
}

// Abort abandons the file: the partial file is closed and removed. It is safe to call after a
// failed Close, and does nothing after a successful one.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.failed == nil {
		w.failed = &Error{Kind: ErrWrite, Path: w.path, Detail: "the writer was aborted"}
	}
	if w.file != nil {
		w.file.Close()
		w.file = nil
	}
	if err := os.Remove(w.partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.failed = errors.Join(w.failed, err)
	}
}
