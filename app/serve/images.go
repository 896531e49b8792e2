package serve

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"strings"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/serve/render"
)

// decodeBase64 reads an A1111 image string: base64, with or without a data: URL prefix.
func decodeBase64(s string) ([]byte, error) {
	if strings.HasPrefix(s, "data:") {
		if _, after, ok := strings.Cut(s, ","); ok {
			s = after
		}
	}
	s = strings.TrimSpace(s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b2, err2 := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err2 == nil {
			return b2, nil
		}
		return nil, fmt.Errorf("not base64: %v", err)
	}
	return b, nil
}

// conditionImages decodes a list of base64 images with the app's limits (imageio: formats,
// pixel count checked from the header before decoding). name is the field, for the 422 detail.
func conditionImages(f *fields, name string, list []string) []compose.Condition {
	var out []compose.Condition
	for i, s := range list {
		data, err := decodeBase64(s)
		if err != nil {
			f.errs = append(f.errs, detailItem{Loc: []any{"body", name, i}, Msg: "image is " + err.Error(), Type: "value_error"})
			continue
		}
		c, err := compose.NewCondition(fmt.Sprintf("%s[%d]", name, i), data)
		if err != nil {
			f.errs = append(f.errs, detailItem{Loc: []any{"body", name, i}, Msg: err.Error(), Type: "value_error"})
			continue
		}
		out = append(out, c)
	}
	return out
}

// encodePNG is one answer image: the PNG with the app's metadata, as base64. Without alpha it is
// an RGB PNG of the colour channels as rendered, the alpha dropped as Pillow's convert("RGB")
// drops it (A1111 answers RGB; clients that save JPEG cannot take RGBA).
func encodePNG(img image.Image, set *imagefile.Settings, alpha bool) (string, error) {
	if !alpha {
		img = render.Opaque(img)
	}
	var buf bytes.Buffer
	if err := imagefile.Encode(&buf, img, set); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
