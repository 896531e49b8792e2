package imageio

import (
	"encoding/binary"
	"fmt"
)

// webpCheckFrame looks inside a WebP's RIFF chunks before it is decoded. DecodeConfig reports the
// VP8X canvas size, but x/image/webp allocates the frame at the size the VP8/VP8L bitstream
// header states — up to 16383×16383 — so a small canvas could carry a 400 MB allocation. libwebp
// refuses a still image whose frame and canvas sizes differ; so do we, and animated WebP, which
// x/image/webp cannot decode, gets its own message. Files too short to tell are left to the
// decoder's own errors.
func webpCheckFrame(data []byte, name string, canvasW, canvasH int, maxPixels int64) error {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WEBP" {
		return nil
	}
	for i := 12; i+8 <= len(data); {
		fourCC := string(data[i : i+4])
		n := int64(binary.LittleEndian.Uint32(data[i+4:]))
		body := data[i+8 : i+8+int(min(n, int64(len(data)-i-8)))]
		w, h := 0, 0
		switch fourCC {
		case "VP8X":
			if len(body) >= 1 && body[0]&0x02 != 0 {
				return fmt.Errorf("image %s is an animated WebP, which Easel cannot read: "+
					"export the frame you want as PNG", name)
			}
		case "VP8 ": // frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height
			if len(body) < 10 {
				return nil
			}
			w, h = int(binary.LittleEndian.Uint16(body[6:])&0x3fff), int(binary.LittleEndian.Uint16(body[8:])&0x3fff)
		case "VP8L": // signature 0x2f, then width−1 and height−1 in 14 bits each
			if len(body) < 5 {
				return nil
			}
			bits := binary.LittleEndian.Uint32(body[1:])
			w, h = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
		}
		if w != 0 || h != 0 {
			if int64(w)*int64(h) > maxPixels {
				return tooLarge(name, w, h, maxPixels)
			}
			if w != canvasW || h != canvasH {
				return fmt.Errorf("image %s is damaged: its WebP canvas is %d×%d but its picture is %d×%d; "+
					"open it in an image editor and save it again as PNG", name, canvasW, canvasH, w, h)
			}
			return nil
		}
		i += 8 + int(min(n+n&1, int64(len(data)))) // chunks are padded to an even size
	}
	return nil
}
