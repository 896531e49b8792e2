package settings

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Canvas is the draft's canvas document as it was left: the start image and the mask painted on
// it (PNG files beside draft.json), the extension and the frame, so a relaunch's next Generate
// starts from the same picture instead of becoming a plain text-to-image.
type Canvas struct {
	// Name is the start image's name as the window shows it ("photo.png", "pasted image 2").
	Name string `json:"name"`
	// SHA256 is the start image file's (it names the image in the PNGs made from it).
	SHA256 string `json:"sha256,omitempty"`
	// Start and Mask are the PNG files' names in the draft's folder (Mask "" = no mask painted).
	Start string `json:"start"`
	Mask  string `json:"mask,omitempty"`
	// Extend is the pixels added left, top, right and bottom.
	Extend [4]int `json:"extend,omitzero"`
	// Strength (0: the default), Feather and Grow (mask pixels) and FollowImage (the output size
	// follows the start image) go with the start image.
	Strength    float64 `json:"strength,omitempty"`
	Feather     int     `json:"feather,omitempty"`
	Grow        int     `json:"grow,omitempty"`
	FollowImage bool    `json:"follow_image,omitempty"`
	// CropOffset is how far the crop a chosen size makes of the start image is moved off its
	// centre (pixels, x then y; absent: centred).
	CropOffset [2]int `json:"crop_offset,omitzero"`
}

// The canvas files' names beside draft.json.
const (
	canvasStartFile = "draft-start.png"
	canvasMaskFile  = "draft-mask.png"
)

// SaveCanvas writes the start image and mask (nil: none) beside the draft and fills c's file
// names; with start nil the files are removed and c is cleared.
func (st *DraftStore) SaveCanvas(c *Canvas, start *image.NRGBA, mask *image.Gray) error {
	dir := filepath.Dir(st.Path)
	if start == nil {
		for _, f := range []string{canvasStartFile, canvasMaskFile} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("the last canvas (%s) could not be removed: %w", f, err)
			}
		}
		*c = Canvas{}
		return nil
	}
	if err := writePNG(filepath.Join(dir, canvasStartFile), start); err != nil {
		return fmt.Errorf("the start image was not kept for next time: %w", err)
	}
	c.Start, c.Mask = canvasStartFile, ""
	if mask != nil && !blank(mask) {
		if err := writePNG(filepath.Join(dir, canvasMaskFile), mask); err != nil {
			return fmt.Errorf("the mask was not kept for next time: %w", err)
		}
		c.Mask = canvasMaskFile
	} else if err := os.Remove(filepath.Join(dir, canvasMaskFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// LoadCanvas reads the saved canvas's start image and mask (mask nil when none was painted). A
// missing or damaged file is an error naming it; the draft's other settings are unaffected.
func (st *DraftStore) LoadCanvas(c Canvas) (start *image.NRGBA, mask *image.Gray, err error) {
	if c.Start == "" || strings.ContainsAny(c.Start+c.Mask, `/\`) {
		return nil, nil, errors.New("the last canvas names no start image file")
	}
	dir := filepath.Dir(st.Path)
	img, err := readPNG(filepath.Join(dir, c.Start))
	if err != nil {
		return nil, nil, fmt.Errorf("the last start image could not be read (%v): the draft starts without it", err)
	}
	start = image.NewNRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(start, start.Rect, img, img.Bounds().Min, draw.Src)
	if c.Mask != "" {
		m, err := readPNG(filepath.Join(dir, c.Mask))
		if err != nil {
			return start, nil, fmt.Errorf("the last mask could not be read (%v): the start image is back without it", err)
		}
		if m.Bounds().Dx() != start.Rect.Dx() || m.Bounds().Dy() != start.Rect.Dy() {
			return start, nil, fmt.Errorf("the last mask is %d×%d, not the start image's %d×%d: the start image is back without it", m.Bounds().Dx(), m.Bounds().Dy(), start.Rect.Dx(), start.Rect.Dy())
		}
		mask = image.NewGray(start.Rect)
		draw.Draw(mask, mask.Rect, m, m.Bounds().Min, draw.Src)
	}
	return start, mask, nil
}

func blank(m *image.Gray) bool {
	for _, v := range m.Pix {
		if v != 0 {
			return false
		}
	}
	return true
}

func writePNG(path string, img image.Image) error {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return err
	}
	return WriteFileAtomic(path, b.Bytes())
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}
