package imagefile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"unicode/utf8"
)

// Chunk keywords.
const (
	KeyParameters = "parameters"
	KeyEasel      = "easel"
)

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// maxTextChunk bounds what Read accepts for one text chunk (a prompt is a few KB).
const maxTextChunk = 16 << 20

// Encode writes img as a PNG with the "parameters" and "easel" chunks for s placed right after
// the header (before the pixels, where readers that stop early still find them).
func Encode(w io.Writer, img image.Image, s *Settings) error {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img); err != nil {
		return fmt.Errorf("encoding the PNG: %w", err)
	}
	data := buf.Bytes()
	// The signature, then IHDR: length 13, type, data, CRC.
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	if len(data) < ihdrEnd || !bytes.Equal(data[:8], pngSignature) || string(data[12:16]) != "IHDR" {
		return errors.New("encoding the PNG: the encoder did not start with a header chunk")
	}
	js, err := settingsJSON(s)
	if err != nil {
		return err
	}
	var chunks bytes.Buffer
	writeChunk(&chunks, textChunk(KeyParameters, Parameters(s)))
	writeChunk(&chunks, iTXt(KeyEasel, string(js)))
	embedded, err := embeddedChunks(s)
	if err != nil {
		return err
	}
	for _, c := range embedded {
		writeChunk(&chunks, c)
	}
	for _, part := range [][]byte{data[:ihdrEnd], chunks.Bytes(), data[ihdrEnd:]} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// settingsJSON is the "easel" chunk's text.
func settingsJSON(s *Settings) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding the settings: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type chunk struct {
	typ  string
	data []byte
}

func writeChunk(w *bytes.Buffer, c chunk) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(c.data)))
	w.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(c.typ))
	crc.Write(c.data)
	w.WriteString(c.typ)
	w.Write(c.data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	w.Write(n[:])
}

// textChunk is tEXt when text is Latin-1 (and has no NUL), else iTXt, as Pillow chooses.
func textChunk(key, text string) chunk {
	latin := make([]byte, 0, len(text))
	for _, r := range text {
		if r == 0 || r > 0xFF {
			return iTXt(key, text)
		}
		latin = append(latin, byte(r))
	}
	return chunk{"tEXt", append(append([]byte(key), 0), latin...)}
}

// iTXt is an uncompressed international text chunk with no language tag.
func iTXt(key, text string) chunk {
	d := append([]byte(key), 0, 0, 0, 0, 0) // keyword, NUL, compression flag, method, "" lang NUL, "" translated NUL
	return chunk{"iTXt", append(d, text...)}
}

// Metadata is what Read finds in a PNG.
type Metadata struct {
	// Parameters is the A1111 text ("" when absent).
	Parameters string
	// Settings is the "easel" chunk decoded, or nil when the file has none (an image from another
	// tool).
	Settings *Settings
	// Text holds every tEXt, iTXt and zTXt chunk by keyword (the two above included).
	Text map[string]string
	// Width, Height are the image size from the header.
	Width, Height int
}

// Read collects the text chunks of a PNG stream (it stops at the first IDAT: the pixels are not
// read). name identifies the file in errors.
func Read(r io.Reader, name string) (*Metadata, error) {
	var sig [8]byte
	if _, err := io.ReadFull(r, sig[:]); err != nil || !bytes.Equal(sig[:], pngSignature) {
		return nil, fmt.Errorf("%s is not a PNG file", name)
	}
	m := &Metadata{Text: map[string]string{}}
	embedded := map[string][]byte{}
	for {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, fmt.Errorf("%s is truncated: %v", name, err)
		}
		n := binary.BigEndian.Uint32(head[:4])
		typ := string(head[4:])
		if typ == "IDAT" || typ == "IEND" {
			break
		}
		isText := typ == "tEXt" || typ == "iTXt" || typ == "zTXt" || typ == "IHDR"
		if (typ == chunkInit || typ == chunkMask) && n <= maxEmbedded {
			data := make([]byte, n+4)
			if _, err := io.ReadFull(r, data); err != nil {
				return nil, fmt.Errorf("%s is truncated in a %s chunk: %v", name, typ, err)
			}
			crc := crc32.NewIEEE()
			crc.Write(head[4:])
			crc.Write(data[:n])
			if crc.Sum32() != binary.BigEndian.Uint32(data[n:]) {
				return nil, fmt.Errorf("%s is damaged: the %s chunk fails its checksum", name, typ)
			}
			embedded[typ] = data[:n]
			continue
		}
		if !isText {
			if _, err := io.CopyN(io.Discard, r, int64(n)+4); err != nil {
				return nil, fmt.Errorf("%s is truncated in a %s chunk: %v", name, typ, err)
			}
			continue
		}
		if n > maxTextChunk {
			return nil, fmt.Errorf("%s has a %s chunk of %d bytes, more than the %d a text chunk may take", name, typ, n, maxTextChunk)
		}
		data := make([]byte, n+4)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("%s is truncated in a %s chunk: %v", name, typ, err)
		}
		crc := crc32.NewIEEE()
		crc.Write(head[4:])
		crc.Write(data[:n])
		if crc.Sum32() != binary.BigEndian.Uint32(data[n:]) {
			return nil, fmt.Errorf("%s is damaged: the %s chunk fails its checksum", name, typ)
		}
		data = data[:n]
		if typ == "IHDR" {
			if n < 8 {
				return nil, fmt.Errorf("%s is damaged: a header chunk of %d bytes", name, n)
			}
			m.Width, m.Height = int(binary.BigEndian.Uint32(data[:4])), int(binary.BigEndian.Uint32(data[4:8]))
			continue
		}
		key, text, err := decodeText(typ, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %s chunk: %v", name, typ, err)
		}
		m.Text[key] = text
	}
	m.Parameters = m.Text[KeyParameters]
	if js, ok := m.Text[KeyEasel]; ok {
		var s Settings
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			return nil, fmt.Errorf("%s: its easel settings are not valid JSON: %v", name, err)
		}
		m.Settings = &s
		for typ, data := range embedded {
			if err := readEmbedded(m.Settings, typ, data); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
		}
	}
	return m, nil
}

// decodeText reads one text chunk's keyword and text.
func decodeText(typ string, data []byte) (key, text string, err error) {
	k, rest, ok := bytes.Cut(data, []byte{0})
	if !ok {
		return "", "", errors.New("no keyword terminator")
	}
	key = latin1(k)
	switch typ {
	case "tEXt":
		return key, latin1(rest), nil
	case "zTXt":
		if len(rest) < 1 {
			return "", "", errors.New("no compression method")
		}
		b, err := inflate(rest[1:])
		return key, latin1(b), err
	}
	// iTXt: compression flag, method, language NUL, translated keyword NUL, text.
	if len(rest) < 2 {
		return "", "", errors.New("too short")
	}
	compressed := rest[0] == 1
	rest = rest[2:]
	for range 2 {
		if _, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
			return "", "", errors.New("unterminated language tag")
		}
	}
	if compressed {
		if rest, err = inflate(rest); err != nil {
			return "", "", err
		}
	}
	if !utf8.Valid(rest) {
		return "", "", errors.New("text is not UTF-8")
	}
	return key, string(rest), nil
}

func inflate(b []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(io.LimitReader(zr, maxTextChunk))
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
