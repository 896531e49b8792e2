package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"os"
	"path/filepath"

	"easel/engine/condimage"
	"easel/engine/imageio"
	"easel/engine/pipeline"
)

// MaxConditions is the model's limit on condition images.
const MaxConditions = pipeline.MaxImages

// Resolution is the output_resolution condition images are sized for (the reference default).
const Resolution = 1024

// Condition is one condition image in the draft.
type Condition struct {
	Name  string // the file name, or "pasted image N"
	Image *image.NRGBA
	// EncodedW, EncodedH are the size the image is resized to for both encoders.
	EncodedW, EncodedH int
	SHA256             string // of the file's bytes (or of the pasted PNG)
	// Made is what the file records of how Easel made it (nil: not an Easel PNG).
	Made *MadeWith
}

// ErrTooMany is wrapped by the error for an eleventh image.
var ErrTooMany = fmt.Errorf("the model takes at most %d condition images", MaxConditions)

// NewCondition decodes an image file's bytes into a condition (name is for messages).
func NewCondition(name string, data []byte) (Condition, error) {
	img, err := imageio.Decode(data, name)
	if err != nil {
		return Condition{}, err
	}
	w, h, err := condimage.ConditionSize(img.Rect.Dx(), img.Rect.Dy(), Resolution)
	if err != nil {
		return Condition{}, fmt.Errorf("%s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	return Condition{Name: name, Image: img, EncodedW: w, EncodedH: h, SHA256: hex.EncodeToString(sum[:]), Made: madeWith(data)}, nil
}

// LoadCondition reads an image file from disk (checked before decoding: imageio's limits).
func LoadCondition(path string) (Condition, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Condition{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if st.IsDir() {
		return Condition{}, fmt.Errorf("%s is a folder: drop image files (%s)", path, imageio.Formats)
	}
	// imageio.Load checks the header's pixel count before decoding; read it through Load, then
	// hash the bytes.
	img, err := imageio.Load(path)
	if err != nil {
		return Condition{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Condition{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	w, h, err := condimage.ConditionSize(img.Rect.Dx(), img.Rect.Dy(), Resolution)
	if err != nil {
		return Condition{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	sum := sha256.Sum256(data)
	return Condition{Name: filepath.Base(path), Image: img, EncodedW: w, EncodedH: h, SHA256: hex.EncodeToString(sum[:]), Made: madeWith(data)}, nil
}

// Add appends a condition, refusing an eleventh.
func (d *Draft) Add(c Condition) error {
	if len(d.Conditions) >= MaxConditions {
		return fmt.Errorf("%s was not added: %w; remove one first", c.Name, ErrTooMany)
	}
	d.Conditions = append(d.Conditions, c)
	return nil
}

// Move moves condition i by delta places (−1 left, +1 right); out-of-range moves do nothing.
func (d *Draft) Move(i, delta int) {
	j := i + delta
	if i < 0 || j < 0 || i >= len(d.Conditions) || j >= len(d.Conditions) {
		return
	}
	d.Conditions[i], d.Conditions[j] = d.Conditions[j], d.Conditions[i]
}

// Remove drops condition i.
func (d *Draft) Remove(i int) {
	if i < 0 || i >= len(d.Conditions) {
		return
	}
	d.Conditions = append(d.Conditions[:i], d.Conditions[i+1:]...)
}
