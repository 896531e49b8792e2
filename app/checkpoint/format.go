package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Version is the format this package writes; Read refuses a newer one.
const Version = 1

// magic opens every checkpoint file.
const magic = "EASELCKP"

// Limits the reader holds a file to before allocating, so a damaged file cannot ask for more
// memory than a real checkpoint needs.
const (
	maxHeader = 16 << 20
	maxArrays = 2*100 + 2      // the current image, a batch's finished images and a first pass's
	maxValues = 256 * 256 * 64 // a 4096² image's latents
)

// The kinds of unusable checkpoint, for errors.Is.
var (
	ErrCorrupt = errors.New("the checkpoint is damaged")
	ErrNewer   = errors.New("the checkpoint was written by a newer Easel")
	ErrOther   = errors.New("the checkpoint belongs to another model or other LoRAs")
)

// Model is the model file a run used: its path then, and its fingerprint (a digest of the .cmf
// header and tensor table), which must match to resume.
type Model struct {
	Path        string `json:"path"`
	Fingerprint string `json:"fingerprint"`
}

// LoRA is a LoRA file a run applied, by path and SHA-256.
type LoRA struct {
	Path     string  `json:"path"`
	SHA256   string  `json:"sha256"`
	Strength float64 `json:"strength"`
}

// File is an input of the run (a condition image, a start image, a mask) by digest; its bytes
// are stored beside the checkpoint (StoredPath).
type File struct {
	Role   string `json:"role"` // the flag or slot it came from ("image", "init", "mask", …)
	Path   string `json:"path"` // where it was read from
	SHA256 string `json:"sha256"`
}

// Checkpoint is a run's state after a step.
type Checkpoint struct {
	Model Model  `json:"model"`
	LoRAs []LoRA `json:"loras,omitempty"`
	Files []File `json:"files,omitempty"`
	// Request is the caller's description of the run (the command line, a window's draft).
	Request json.RawMessage `json:"request"`
	// Seed and VariationSeed are the seeds the run drew (a random one included).
	Seed          uint64  `json:"seed"`
	NoiseSeed     *uint64 `json:"noise_seed,omitempty"` // when the noise is not the seed's
	VariationSeed uint64  `json:"variation_seed,omitempty"`
	// Pass is 1, or 2 for a second (hi-res) pass.
	Pass int `json:"pass"`
	// Image of Images is the batch's image being made (0-based); Step of Steps its steps done.
	Image  int `json:"image"`
	Images int `json:"images"`
	Step   int `json:"step"`
	Steps  int `json:"steps"`
	// Sigmas is the schedule walked, with the terminal 0.
	Sigmas []float32 `json:"sigmas"`

	// Latents are image Image's packed latents after Step steps.
	Latents []float32 `json:"-"`
	// Finished are the final latents of the images of this pass before Image.
	Finished [][]float32 `json:"-"`
	// FirstPass, in a second pass, are the first pass's final latents of every image, after
	// FirstPassSteps steps.
	FirstPass      [][]float32 `json:"-"`
	FirstPassSteps int         `json:"first_pass_steps,omitempty"`
}

// header is the JSON part with the array counts the binary part holds.
type header struct {
	*Checkpoint
	Arrays    int `json:"arrays"`
	FirstPass int `json:"first_pass_images,omitempty"`
}

// Marshal encodes c: magic, version, the JSON header, the float32 arrays (little-endian), and the
// SHA-256 of all of it.
func (c *Checkpoint) Marshal() ([]byte, error) {
	arrays := append(append([][]float32{c.Latents}, c.Finished...), c.FirstPass...)
	js, err := json.Marshal(header{Checkpoint: c, Arrays: len(arrays), FirstPass: len(c.FirstPass)})
	if err != nil {
		return nil, err
	}
	n := len(magic) + 8 + len(js) + 4
	for _, a := range arrays {
		n += 4 + 4*len(a)
	}
	b := make([]byte, 0, n+sha256.Size)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(js)))
	b = append(b, js...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(arrays)))
	for _, a := range arrays {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(a)))
		for _, v := range a {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

// Unmarshal decodes a checkpoint file's bytes. A file of a newer format wraps ErrNewer; one that
// is truncated, altered or not a checkpoint wraps ErrCorrupt. It never panics.
func Unmarshal(b []byte) (*Checkpoint, error) {
	if len(b) < len(magic)+8 || string(b[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: it is not an Easel checkpoint (or is cut off before its header)", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[len(magic):]); v > Version {
		return nil, fmt.Errorf("%w (format %d; this one reads up to %d): update Easel to resume it", ErrNewer, v, Version)
	} else if v == 0 {
		return nil, fmt.Errorf("%w: format 0 does not exist", ErrCorrupt)
	}
	if len(b) < len(magic)+8+sha256.Size {
		return nil, fmt.Errorf("%w: it is cut off (%d bytes)", ErrCorrupt, len(b))
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: its checksum does not match (cut off or altered; %d bytes)", ErrCorrupt, len(b))
	}
	r := &reader{b: body[len(magic)+4:]}
	hlen := r.u32()
	if hlen > maxHeader || int(hlen) > len(r.b) {
		return nil, fmt.Errorf("%w: a header of %d bytes in %d", ErrCorrupt, hlen, len(b))
	}
	c := &Checkpoint{}
	h := header{Checkpoint: c}
	if err := json.Unmarshal(r.take(int(hlen)), &h); err != nil {
		return nil, fmt.Errorf("%w: its header: %v", ErrCorrupt, err)
	}
	n := int(r.u32())
	if n != h.Arrays || n < 1 || n > maxArrays || h.FirstPass < 0 || h.FirstPass > n-1 {
		return nil, fmt.Errorf("%w: %d arrays (the header says %d, %d of a first pass)", ErrCorrupt, n, h.Arrays, h.FirstPass)
	}
	arrays := make([][]float32, n)
	for i := range arrays {
		m := r.u32()
		if m > maxValues || int(m)*4 > len(r.b) {
			return nil, fmt.Errorf("%w: array %d of %d values runs past the end", ErrCorrupt, i, m)
		}
		a, data := make([]float32, m), r.take(4*int(m))
		for j := range a {
			a[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:]))
		}
		arrays[i] = a
	}
	if r.bad || len(r.b) != 0 {
		return nil, fmt.Errorf("%w: its parts do not add up to its length", ErrCorrupt)
	}
	c.Latents = arrays[0]
	rest := arrays[1:]
	c.Finished, c.FirstPass = rest[:len(rest)-h.FirstPass], rest[len(rest)-h.FirstPass:]
	if len(c.Finished) == 0 {
		c.Finished = nil
	}
	if len(c.FirstPass) == 0 {
		c.FirstPass = nil
	}
	if err := c.valid(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return c, nil
}

// valid checks the header's numbers against each other and the arrays.
func (c *Checkpoint) valid() error {
	switch {
	case c.Pass != 1 && c.Pass != 2:
		return fmt.Errorf("pass %d", c.Pass)
	case c.Images < 1 || c.Image < 0 || c.Image >= c.Images:
		return fmt.Errorf("image %d of %d", c.Image+1, c.Images)
	case c.Steps < 1 || c.Step < 0 || c.Step > c.Steps || len(c.Sigmas) != c.Steps+1:
		return fmt.Errorf("step %d of %d with %d sigmas", c.Step, c.Steps, len(c.Sigmas))
	case len(c.Finished) != c.Image:
		return fmt.Errorf("%d finished images before image %d", len(c.Finished), c.Image+1)
	case c.Pass == 2 && len(c.FirstPass) != c.Images, c.Pass == 1 && len(c.FirstPass) != 0:
		return fmt.Errorf("%d first-pass images in pass %d of a batch of %d", len(c.FirstPass), c.Pass, c.Images)
	case len(c.Latents) == 0:
		return errors.New("no latents")
	}
	for _, a := range c.Finished {
		if len(a) != len(c.Latents) {
			return errors.New("finished images of another size")
		}
	}
	for _, a := range c.FirstPass {
		if len(a) != len(c.FirstPass[0]) || len(a) == 0 {
			return errors.New("first-pass images of different sizes")
		}
	}
	return nil
}

// reader walks the body; a read past the end sets bad and returns zeros.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad, r.b = true, nil
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) take(n int) []byte {
	if n > len(r.b) {
		r.bad = true
		out := r.b
		r.b = nil
		return out
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
