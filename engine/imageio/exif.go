package imageio

import (
	"bytes"
	"encoding/binary"
)

// exifOrientation is the EXIF orientation tag (0x0112, values 1–8) of an image file, or 1 (upright)
// when the file has none or it is unreadable. It is looked for where each format keeps it: a JPEG's
// APP1 "Exif" segment, a PNG's eXIf chunk, a WebP's EXIF chunk, and a TIFF's own first IFD.
// A malformed EXIF block is ignored rather than refused: the pixels are still good.
func exifOrientation(data []byte, format string) int {
	var tiff []byte
	switch format {
	case "jpeg":
		tiff = jpegExif(data)
	case "png":
		tiff = pngExif(data)
	case "webp":
		tiff = webpExif(data)
	case "tiff":
		tiff = data
	}
	if o := tiffOrientation(tiff); o >= 1 && o <= 8 {
		return o
	}
	return 1
}

var exifHeader = []byte("Exif\x00\x00")

// jpegExif is the TIFF-structured payload of a JPEG's first APP1 Exif segment, or nil.
func jpegExif(d []byte) []byte {
	if len(d) < 4 || d[0] != 0xFF || d[1] != 0xD8 {
		return nil
	}
	for i := 2; i+4 <= len(d); {
		if d[i] != 0xFF {
			return nil
		}
		marker := d[i+1]
		switch {
		case marker == 0xFF: // fill byte
			i++
			continue
		case marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7): // no length
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9: // start of scan / end of image: no more headers
			return nil
		}
		n := int(binary.BigEndian.Uint16(d[i+2:]))
		if n < 2 || i+2+n > len(d) {
			return nil
		}
		seg := d[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, exifHeader) {
			return seg[len(exifHeader):]
		}
		i += 2 + n
	}
	return nil
}

// pngExif is the payload of a PNG's eXIf chunk, or nil.
func pngExif(d []byte) []byte {
	const signature = "\x89PNG\r\n\x1a\n"
	if !bytes.HasPrefix(d, []byte(signature)) {
		return nil
	}
	for i := len(signature); i+8 <= len(d); {
		n := int(binary.BigEndian.Uint32(d[i:]))
		typ := string(d[i+4 : i+8])
		if n < 0 || n > len(d)-i-12 {
			return nil
		}
		if typ == "eXIf" {
			return d[i+8 : i+8+n]
		}
		if typ == "IEND" {
			return nil // (eXIf belongs before IDAT, but some writers put it after; Pillow reads it there too)
		}
		i += 12 + n
	}
	return nil
}

// webpExif is the payload of a WebP's EXIF chunk (with or without an "Exif\0\0" prefix), or nil.
func webpExif(d []byte) []byte {
	if len(d) < 12 || string(d[0:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return nil
	}
	for i := 12; i+8 <= len(d); {
		n := int(binary.LittleEndian.Uint32(d[i+4:]))
		if n < 0 || n > len(d)-i-8 {
			return nil
		}
		if string(d[i:i+4]) == "EXIF" {
			return bytes.TrimPrefix(d[i+8:i+8+n], exifHeader)
		}
		i += 8 + n + n&1 // chunks are padded to an even size
	}
	return nil
}

// tiffOrientation reads tag 0x0112 from the first IFD of TIFF-structured data, or returns 0.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var order binary.ByteOrder
	switch string(t[0:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 0
	}
	if order.Uint16(t[2:]) != 42 {
		return 0
	}
	ifd := int64(order.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 0
	}
	count := int64(order.Uint16(t[ifd:]))
	for e := int64(0); e < count; e++ {
		at := ifd + 2 + 12*e
		if at+12 > int64(len(t)) {
			return 0
		}
		if order.Uint16(t[at:]) != 0x0112 {
			continue
		}
		if typ := order.Uint16(t[at+2:]); typ != 3 { // SHORT
			return 0
		}
		return int(order.Uint16(t[at+8:]))
	}
	return 0
}
