package cmf

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"easel/engine/mmapfile"
	"easel/engine/quant"
)

// File is an open CMF model file. Tensor payloads, the vocab and the config blobs are slices of
// one read-only mapping: they stay valid until Close and must not be written to.
type File struct {
	path       string
	mapping    *mmapfile.File
	data       []byte // the whole mapping
	env        Envelope
	header     Header
	headerJSON []byte
	entries    []Entry
	byName     map[string]int
}

var _ quant.Source = (*File)(nil)

// Open maps path and validates its structure: the envelope, the header JSON, every directory
// record, alignment, bounds and exact payload sizes. Hashes are not read here; Verify checks them.
func Open(path string) (f *File, err error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, &Error{Kind: ErrNotCMF, Path: path, Detail: fmt.Sprintf("cannot open: %v", err), Advice: "check the path and that the file is readable", Err: err}
	}
	m.Describe(KindModelFile, RemedyFileChanged)
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	defer mmapfile.Recover(&err) // the file shrank between the size check and the read
	defer mmapfile.Guard()()
	f, err = parse(path, m.Bytes())
	if err != nil {
		return nil, err
	}
	f.mapping = m
	return f, nil
}

// KindModelFile is what a CMF file is to the user (in a *mmapfile.FaultError), and
// RemedyFileChanged what to do when it changes or goes away while it is mapped.
const (
	KindModelFile     = "model file"
	RemedyFileChanged = "reconnect the drive or choose the model again"
)

// Changed reports the file as changed under its mapping (a *mmapfile.FaultError) when it is gone
// or its length is no longer the one it was opened with; nil when it looks the same. A reader
// that does not fault on the CPU (the GPU) asks it after a failure.
func (f *File) Changed() error {
	if f.mapping == nil {
		return nil
	}
	return f.mapping.Changed()
}

// parse validates a whole CMF image held in b; the File aliases b.
func parse(path string, b []byte) (*File, error) {
	env, err := parseEnvelope(path, b)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, data: b, env: env}
	f.headerJSON = b[env.Header.Off:env.Header.End():env.Header.End()]
	if f.header, err = parseHeader(f.headerJSON); err != nil {
		return nil, corrupt(path, "", adviceRedownload, "%v", err)
	}
	if err := checkSharding(path, &f.header); err != nil {
		return nil, err
	}
	if f.entries, err = decodeDirectory(path, b[env.Dir.Off:env.Dir.End()], env.Data.Len); err != nil {
		return nil, err
	}
	f.byName = make(map[string]int, len(f.entries))
	for i := range f.entries {
		f.byName[f.entries[i].Name] = i
	}
	return f, nil
}

// checkSharding refuses one shard of a split model: Easel runs single-file models.
func checkSharding(path string, h *Header) error {
	raw := h.Get("shard")
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var s struct{ No, Count int }
	if err := json.Unmarshal(raw, &s); err != nil {
		return corrupt(path, "", adviceRedownload, "header shard field %s is not {\"no\",\"count\"}", raw)
	}
	if s.Count > 1 {
		return &Error{Kind: ErrUnsupported, Path: path, Detail: fmt.Sprintf("this is shard %d of %d of a split model; Easel runs single-file models", s.No, s.Count),
			Advice: "convert the model into one file with `easel convert`"}
	}
	return nil
}

// Close unmaps the file. Slices obtained from it must not be used afterwards.
func (f *File) Close() error {
	if f == nil || f.mapping == nil {
		return nil
	}
	m := f.mapping
	f.mapping, f.data = nil, nil
	return m.Close()
}

// Path is the file's path as given to Open.
func (f *File) Path() string { return f.path }

// Size is the file's length in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// Bytes is the whole mapping, for backends that wrap it without copying (Metal no-copy buffers).
// A tensor's payload starts at Envelope().Data.Off + entry.Offset.
func (f *File) Bytes() []byte { return f.data }

// Envelope is the file's fixed head: section offsets, feature bits, header and directory hashes.
func (f *File) Envelope() Envelope { return f.env }

// RequiredFeatures is the envelope's feature bitmask.
func (f *File) RequiredFeatures() Features { return f.env.RequiredFeatures }

// Header is the decoded header JSON.
func (f *File) Header() *Header { return &f.header }

// HeaderJSON is the header exactly as stored.
func (f *File) HeaderJSON() []byte { return f.headerJSON }

// Entries lists the directory records in file order. The slice is the File's own: do not modify it.
func (f *File) Entries() []Entry { return f.entries }

// Names lists the tensor names in directory order.
func (f *File) Names() []string {
	names := make([]string, len(f.entries))
	for i := range f.entries {
		names[i] = f.entries[i].Name
	}
	return names
}

// Entry returns the directory record of a tensor.
func (f *File) Entry(name string) (Entry, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Entry{}, false
	}
	return f.entries[i], true
}

// payload is the entry's bytes in the mapping, capped so that appends cannot reach past them.
func (f *File) payload(e *Entry) []byte {
	start := f.env.Data.Off + e.Offset
	end := start + e.Size
	return f.data[start:end:end]
}

// Tensor returns the named tensor; its Data aliases the mapping. It implements quant.Source.
func (f *File) Tensor(name string) (*quant.Tensor, error) {
	if f.data == nil && len(f.entries) > 0 {
		return nil, f.closed(name)
	}
	i, ok := f.byName[name]
	if !ok {
		return nil, f.missing(name)
	}
	e := &f.entries[i]
	return &quant.Tensor{Name: e.Name, DType: e.DType, Shape: append([]int(nil), e.Shape...), Data: f.payload(e)}, nil
}

func (f *File) closed(tensor string) error {
	return &Error{Kind: ErrClosed, Path: f.path, Tensor: tensor, Detail: "the file was closed", Advice: "this is a bug: open the file again before reading from it"}
}

// Require checks that every named tensor is present and reports all that are missing at once.
func (f *File) Require(names ...string) error {
	var missing []string
	for _, n := range names {
		if _, ok := f.byName[n]; !ok {
			missing = append(missing, n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return f.missing(missing[0])
	}
	shown := missing[:min(len(missing), 5)]
	more := ""
	if len(missing) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
	}
	e := f.missing(missing[0]).(*Error)
	e.Tensor = ""
	e.Detail = fmt.Sprintf("%d required tensors are missing: %s%s", len(missing), strings.Join(shown, ", "), more)
	return e
}

func (f *File) missing(name string) error {
	arch := f.header.Arch.Name
	advice := "the file does not hold a complete model in the layout Easel expects (cortiq's Qwen-Image-2.1 layout): " + adviceReconvert
	if component, _, ok := strings.Cut(name, "."); ok && !f.hasPrefix(component+".") {
		advice = fmt.Sprintf("the file has no %q component at all (arch %q): %s", component, arch, adviceReconvert)
	}
	return &Error{Kind: ErrMissing, Path: f.path, Tensor: name, Detail: "no tensor of this name in the file", Advice: advice}
}

func (f *File) hasPrefix(prefix string) bool {
	for i := range f.entries {
		if strings.HasPrefix(f.entries[i].Name, prefix) {
			return true
		}
	}
	return false
}

// ConfigJSON returns one of the u8 JSON blobs a Qwen-Image-2.1 container carries
// ("dit.config_json", "te.config_json", "vae.config_json", "qi21.config_json",
// "qi21.scheduler_json", "vis.config_json"), checked to be valid JSON.
func (f *File) ConfigJSON(name string) ([]byte, error) {
	t, err := f.Tensor(name)
	if err != nil {
		return nil, err
	}
	if t.DType != quant.U8 {
		return nil, corrupt(f.path, name, adviceReconvert, "holds %s data, not a u8 JSON blob", t.DType)
	}
	if !json.Valid(t.Data) {
		return nil, corrupt(f.path, name, adviceRedownload, "is not valid JSON")
	}
	return t.Data, nil
}

// Vocab is the vocab section (tokenizer.json, verbatim), or nil when the file has none.
func (f *File) Vocab() []byte {
	if f.env.Vocab.Len == 0 {
		return nil
	}
	return f.data[f.env.Vocab.Off:f.env.Vocab.End():f.env.Vocab.End()]
}

// Prefetch asks the system to read the payloads of every tensor whose name starts with one of
// the prefixes ("dit.", "vae.", …) into memory ahead of use. Advisory: errors are ignored.
func (f *File) Prefetch(prefixes ...string) { f.advise(mmapfile.WillNeed, prefixes) }

// Release drops the payloads of every tensor whose name starts with one of the prefixes from the
// process's resident memory (the network has finished; its weights are read again from the file,
// or the page cache, if it runs again). Advisory: errors are ignored.
func (f *File) Release(prefixes ...string) { f.advise(mmapfile.DontNeed, prefixes) }

// advise applies a to the payload ranges of the tensors under the prefixes, merging neighbours.
func (f *File) advise(a mmapfile.Advice, prefixes []string) {
	if f.mapping == nil {
		return
	}
	base := int64(f.env.Data.Off)
	var start, end int64 = -1, -1
	flush := func() {
		if start >= 0 {
			f.mapping.Advise(start, end-start, a)
		}
		start, end = -1, -1
	}
	for _, e := range f.sortedByOffset() {
		match := false
		for _, p := range prefixes {
			match = match || strings.HasPrefix(e.Name, p)
		}
		if !match {
			flush()
			continue
		}
		off := base + int64(e.Offset)
		if start < 0 {
			start = off
		}
		end = off + int64(e.Size)
	}
	flush()
}

// sortedByOffset is the directory in payload order.
func (f *File) sortedByOffset() []Entry {
	out := slices.Clone(f.entries)
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	return out
}
