package preview

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"easel/app/settings"
	"easel/engine/cmf"
)

// ModelKey identifies what a calibration depends on in a model file without reading its weights:
// a SHA-256 over the calibration version and every vae.* tensor's directory record (name, codec,
// shape, size and the 64-bit payload hash the file records). Any change to the VAE's weights or
// config changes the key; a file that differs only elsewhere (another denoiser codec) keeps it.
// Reading a 13 GB file to hash it would take longer than the calibration itself.
func ModelKey(entries []cmf.Entry) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "easel preview calibration v%d\n", CalibrationVersion)
	var b [8]byte
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, "vae.") {
			continue
		}
		n++
		fmt.Fprintf(h, "%s %d %v ", e.Name, e.DType, e.Shape)
		binary.LittleEndian.PutUint64(b[:], e.Size)
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], e.Hash)
		h.Write(b[:])
	}
	if n == 0 {
		return "", errors.New("preview calibration: the model file has no vae.* tensors: it is not a Qwen-Image-2.1 model")
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// Cache keeps calibrated projections as JSON files named by ModelKey.
type Cache struct {
	Dir string
}

// DefaultCache is the previews/ folder in the app-support folder.
func DefaultCache() (Cache, error) {
	dir, err := settings.Dir()
	if err != nil {
		return Cache{}, err
	}
	return Cache{Dir: filepath.Join(dir, "previews")}, nil
}

func (c Cache) path(key string) string { return filepath.Join(c.Dir, key+".json") }

// Load returns the projection cached for key; found is false when there is none. A damaged file
// is an error (the caller calibrates again and overwrites it).
func (c Cache) Load(key string) (p *Projection, found bool, err error) {
	b, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the cached preview calibration: %w", err)
	}
	if p, err = Parse(b); err != nil {
		return nil, false, fmt.Errorf("cached preview calibration %s: %w", c.path(key), err)
	}
	return p, true, nil
}

// Store writes p under key, atomically.
func (c Cache) Store(key string, p *Projection) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return settings.WriteFileAtomic(c.path(key), append(b, '\n'))
}
