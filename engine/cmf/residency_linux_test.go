package cmf

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"easel/engine/quant"
)

// fileResident is this process's resident pages that map files (RssFile), in bytes.
func fileResident(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// Release drops one network's pages from the resident set and leaves the others'; a read
// afterwards still sees the same bytes.
func TestReleaseDropsOnlyThatNetworksPages(t *testing.T) {
	const n = 32 << 20
	path := filepath.Join(t.TempDir(), "r.cmf")
	w, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"te.w", "dit.w"} {
		payload := make([]byte, n)
		for j := range payload {
			payload[j] = byte(i + j)
		}
		if err := w.AddTensor(name, quant.U8, []int{n}, payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetHeader(sampleHeader()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	touch := func(name string) (sum int) {
		tn, _ := f.Tensor(name)
		for i := 0; i < len(tn.Data); i += 4096 {
			sum += int(tn.Data[i])
		}
		return sum
	}
	te0, _ := touch("te.w"), touch("dit.w")
	before := fileResident(t)
	f.Release("te.")
	after := fileResident(t)
	if before-after < n*9/10 {
		t.Errorf("Release(te.) freed %d bytes of resident file pages, want about %d", before-after, n)
	}
	f.Release("vae.") // nothing under it: nothing changes
	if d := after - fileResident(t); d > n/10 {
		t.Errorf("releasing an absent network freed %d bytes", d)
	}
	f.Prefetch("te.")
	if touch("te.w") != te0 {
		t.Error("the released tensor reads back different bytes")
	}
	if grown := fileResident(t) - after; grown < n*9/10 {
		t.Errorf("reading the released tensor again made %d bytes resident, want about %d", grown, n)
	}
}
