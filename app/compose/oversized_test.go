package compose

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file whose header claims more pixels than imageio accepts is refused with a message naming
// it, before anything is decoded.
func TestOversizedImageIsRefused(t *testing.T) {
	b := pngBytes(t, 1, 1)
	// IHDR: length (4) "IHDR" (4) width (4) height (4) … CRC over type+data at 29.
	binary.BigEndian.PutUint32(b[16:], 20000)
	binary.BigEndian.PutUint32(b[20:], 6000)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	path := filepath.Join(t.TempDir(), "huge.png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadCondition(path)
	if err == nil || !strings.Contains(err.Error(), "huge.png") {
		t.Fatalf("a 120-megapixel header: %v, want a refusal naming the file", err)
	}
	t.Log(err)
}
