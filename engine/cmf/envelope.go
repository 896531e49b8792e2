package cmf

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Layout constants of CMF v2 (cmf.md §2, §4, §6).
const (
	EnvelopeSize      = 128
	Version           = 2
	DataAlignment     = 4096    // data_off is a multiple of this
	TensorAlignment   = 64      // every entry offset (relative to data_off) is a multiple of this
	LargeTensorMin    = 16384   // writers place payloads at least this long…
	LargeTensorAlign  = 4096    // …at a multiple of this
	dirRecordSize     = 56      // one directory record
	dirPreambleSize   = 16      // count u64, pool_off u64
	maxNDim           = 6       // shape slots in a record
	maxHeaderJSON     = 1 << 28 // a header JSON longer than 256 MiB is refused as corrupt
	maxPlausibleFile  = 1 << 50 // a section reaching past 1 PiB is a corrupt field, not a short file
	maxNameLen        = 1<<16 - 1
	maxPoolOffset     = 1<<32 - 1
	maxDim            = 1<<32 - 1
	envMagicOffset    = 0x00
	envSectionsOffset = 0x10
	envHashesOffset   = 0x70
)

// Magic is the first four bytes of every CMF file.
var Magic = [4]byte{'C', 'M', 'F', 0x01}

// Features is the envelope's required_features bitmask (cmf.md §2.1).
type Features uint32

// The feature bits cortiq defines. Easel reads files needing only Supported.
const (
	FeatTensorDir     Features = 1 << 0
	FeatBinaryMasks   Features = 1 << 1
	FeatQuant2F       Features = 1 << 2
	FeatDeltaMasks    Features = 1 << 3
	FeatHotPacks      Features = 1 << 4
	FeatLoopMasks     Features = 1 << 5
	FeatSkillFile     Features = 1 << 6
	FeatPrismHadamard Features = 1 << 7
	FeatPrismAffine   Features = 1 << 8
	FeatSkillsV2      Features = 1 << 9
	FeatRouterV2      Features = 1 << 10
	FeatDecision      Features = 1 << 11
	FeatBoundedState  Features = 1 << 12
	FeatGenome        Features = 1 << 13

	// Supported is what this reader implements: the tensor directory, a masks section (which it
	// skips: image models have none) and the q8_2f/vbit dtypes.
	Supported = FeatTensorDir | FeatBinaryMasks | FeatQuant2F
)

var featureNames = [...]string{"TENSOR_DIR", "BINARY_MASKS", "QUANT_2F", "DELTA_MASKS", "HOT_PACKS",
	"LOOP_MASKS", "SKILL_FILE", "PRISM_HADAMARD", "PRISM_AFFINE", "SKILLS_V2", "ROUTER_V2", "DECISION",
	"BOUNDED_STATE", "GENOME"}

// String lists the set bits by cortiq's names, e.g. "TENSOR_DIR|QUANT_2F".
func (f Features) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for bit := 0; bit < 32; bit++ {
		if f&(1<<bit) == 0 {
			continue
		}
		if bit < len(featureNames) {
			parts = append(parts, featureNames[bit])
		} else {
			parts = append(parts, fmt.Sprintf("bit%d", bit))
		}
	}
	return strings.Join(parts, "|")
}

// Section is a byte range of the file. A section with Len 0 is absent, whatever its Off.
type Section struct {
	Off, Len uint64
}

// End is the offset one past the section.
func (s Section) End() uint64 { return s.Off + s.Len }

// Envelope is the fixed 128-byte head of a CMF file.
type Envelope struct {
	Version          uint32
	Flags            uint32
	RequiredFeatures Features
	Header           Section // the header JSON
	Dir              Section // the tensor directory
	Data             Section // the weight blob; entry offsets are relative to Data.Off
	Masks            Section
	Vocab            Section // tokenizer.json, verbatim
	Index            Section // sparse index (cortiq, deprecation-pending)
	HeaderHash       uint64  // Hash64 of the header JSON; 0 = not recorded
	DirHash          uint64  // Hash64 of the directory; 0 = not recorded
}

// namedSection is one of the six envelope sections, in envelope order.
type namedSection struct {
	name     string
	s        Section
	required bool // header and directory must be present
	trailing bool // masks, vocab, index: may lie inside the data section (cortiq tail append)
}

func (e *Envelope) sections() []namedSection {
	return []namedSection{
		{"header", e.Header, true, false}, {"directory", e.Dir, true, false}, {"data", e.Data, false, false},
		{"masks", e.Masks, false, true}, {"vocab", e.Vocab, false, true}, {"index", e.Index, false, true},
	}
}

// encode lays the envelope out as its 128 bytes.
func (e *Envelope) encode() [EnvelopeSize]byte {
	var b [EnvelopeSize]byte
	copy(b[envMagicOffset:], Magic[:])
	binary.LittleEndian.PutUint32(b[4:], e.Version)
	binary.LittleEndian.PutUint32(b[8:], e.Flags)
	binary.LittleEndian.PutUint32(b[12:], uint32(e.RequiredFeatures))
	for i, sec := range e.sections() {
		binary.LittleEndian.PutUint64(b[envSectionsOffset+16*i:], sec.s.Off)
		binary.LittleEndian.PutUint64(b[envSectionsOffset+16*i+8:], sec.s.Len)
	}
	binary.LittleEndian.PutUint64(b[envHashesOffset:], e.HeaderHash)
	binary.LittleEndian.PutUint64(b[envHashesOffset+8:], e.DirHash)
	return b
}

// parseEnvelope reads and checks the envelope of a file of len(b) bytes: what cortiq's
// parse_envelope checks, and also that header, directory and data do not overlap each other or the
// envelope. (Masks, vocab and index may lie inside the data section: cortiq's tail append grows the
// data over them. They must still not overlap the envelope, header or directory, or each other.)
func parseEnvelope(path string, b []byte) (Envelope, error) {
	size := uint64(len(b))
	if size < 4 || [4]byte(b[:4]) != Magic {
		if size < EnvelopeSize && size > 0 && strings.HasPrefix(string(Magic[:]), string(b[:min(len(b), 4)])) {
			return Envelope{}, &Error{Kind: ErrTruncated, Path: path, Detail: fmt.Sprintf("only %d bytes, shorter than the %d-byte CMF envelope", size, EnvelopeSize), Advice: adviceRedownload}
		}
		return Envelope{}, &Error{Kind: ErrNotCMF, Path: path, Detail: "does not start with the CMF magic bytes \"CMF\\x01\"", Advice: adviceNotCMF}
	}
	if size < EnvelopeSize {
		return Envelope{}, &Error{Kind: ErrTruncated, Path: path, Detail: fmt.Sprintf("only %d bytes, shorter than the %d-byte CMF envelope", size, EnvelopeSize), Advice: adviceRedownload}
	}
	var e Envelope
	e.Version = binary.LittleEndian.Uint32(b[4:])
	if e.Version != Version {
		return Envelope{}, &Error{Kind: ErrUnsupported, Path: path, Detail: fmt.Sprintf("CMF version %d; Easel reads version %d", e.Version, Version), Advice: adviceReconvert}
	}
	e.Flags = binary.LittleEndian.Uint32(b[8:])
	e.RequiredFeatures = Features(binary.LittleEndian.Uint32(b[12:]))
	if unknown := e.RequiredFeatures &^ Supported; unknown != 0 {
		return Envelope{}, &Error{Kind: ErrUnsupported, Path: path,
			Detail: fmt.Sprintf("requires feature %s (required_features %#x), which Easel does not support; it reads files that need only %s", unknown, uint32(e.RequiredFeatures), Supported),
			Advice: "this is not a plain image-model container: " + adviceReconvert}
	}
	ptrs := []*Section{&e.Header, &e.Dir, &e.Data, &e.Masks, &e.Vocab, &e.Index}
	for i, p := range ptrs {
		p.Off = binary.LittleEndian.Uint64(b[envSectionsOffset+16*i:])
		p.Len = binary.LittleEndian.Uint64(b[envSectionsOffset+16*i+8:])
	}
	e.HeaderHash = binary.LittleEndian.Uint64(b[envHashesOffset:])
	e.DirHash = binary.LittleEndian.Uint64(b[envHashesOffset+8:])

	secs := e.sections()
	var reach uint64 // the furthest byte any section claims
	for _, s := range secs {
		if s.required && s.s.Len == 0 {
			return Envelope{}, corrupt(path, "", adviceRedownload, "the envelope records no %s section", s.name)
		}
		if s.s.Len == 0 {
			continue
		}
		end := s.s.Off + s.s.Len
		if end < s.s.Off || end > maxPlausibleFile {
			return Envelope{}, corrupt(path, "", adviceRedownload, "the %s section [%d, +%d) lies outside the file's %d bytes", s.name, s.s.Off, s.s.Len, size)
		}
		if s.s.Off < EnvelopeSize {
			return Envelope{}, corrupt(path, "", adviceRedownload, "the %s section starts at byte %d, inside the %d-byte envelope", s.name, s.s.Off, EnvelopeSize)
		}
		reach = max(reach, end)
	}
	if reach > size {
		return Envelope{}, &Error{Kind: ErrTruncated, Path: path,
			Detail: fmt.Sprintf("the file is truncated at %s of %s (%d of %d bytes)", humanBytes(size), humanBytes(reach), size, reach),
			Advice: "the download or conversion did not finish: download or convert it again"}
	}
	if e.Data.Len > 0 && e.Data.Off%DataAlignment != 0 {
		return Envelope{}, corrupt(path, "", adviceRedownload, "the data section starts at byte %d, not a multiple of %d", e.Data.Off, DataAlignment)
	}
	if e.Header.Len > maxHeaderJSON {
		return Envelope{}, corrupt(path, "", adviceRedownload, "the header JSON claims %d bytes; no model header is that large", e.Header.Len)
	}
	for i := range secs {
		for j := i + 1; j < len(secs); j++ {
			a, c := secs[i], secs[j]
			if a.s.Len == 0 || c.s.Len == 0 || (a.name == "data" && c.trailing) {
				continue
			}
			if a.s.Off < c.s.End() && c.s.Off < a.s.End() {
				return Envelope{}, corrupt(path, "", adviceRedownload, "the %s section [%d, %d) overlaps the %s section [%d, %d)", a.name, a.s.Off, a.s.End(), c.name, c.s.Off, c.s.End())
			}
		}
	}
	return e, nil
}

// humanBytes prints a byte count the way people read file sizes: "3.1 GB", "512 KB", "17 B".
func humanBytes(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
