package checkpoint

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// sample is a checkpoint of image 2 of a batch of 3 after step 3 of 4.
func sample() *Checkpoint {
	lat := func(seed float32) []float32 {
		a := make([]float32, 4*64)
		for i := range a {
			a[i] = seed + float32(i)*0.001
		}
		return a
	}
	return &Checkpoint{
		Model:   Model{Path: "/m/tiny.cmf", Fingerprint: "abc123"},
		LoRAs:   []LoRA{{Path: "/l/style.safetensors", SHA256: "feed", Strength: 0.8}},
		Files:   []File{{Role: "image", Path: "/in/cat.png", SHA256: "beef"}},
		Request: []byte(`{"args":["--prompt","a cat"]}`),
		Seed:    7, VariationSeed: 9,
		Pass: 1, Image: 1, Images: 3, Step: 3, Steps: 4,
		Sigmas:   []float32{1, 0.75, 0.5, 0.25, 0},
		Latents:  lat(1),
		Finished: [][]float32{lat(2)},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []*Checkpoint{sample(), func() *Checkpoint {
		c := sample()
		c.Pass, c.Image, c.Images, c.Finished = 2, 0, 2, nil
		c.FirstPass = [][]float32{make([]float32, 64), make([]float32, 64)}
		return c
	}()} {
		path := filepath.Join(t.TempDir(), "run.ckpt")
		if err := WriteFile(path, c); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("read back\n%+v\nwrote\n%+v", got, c)
		}
	}
}

// TestRefusals: another model, other LoRAs, a newer format, a truncated or altered file are each
// refused with a sentence; a damaged file stays where it is.
func TestRefusals(t *testing.T) {
	c := sample()
	if err := c.Check("abc123", c.LoRAs); err != nil {
		t.Fatalf("the same model and LoRAs: %v", err)
	}
	for name, err := range map[string]error{
		"another model":    c.Check("other", c.LoRAs),
		"no LoRA":          c.Check("abc123", nil),
		"another LoRA":     c.Check("abc123", []LoRA{{Path: "/l/style.safetensors", SHA256: "f00d", Strength: 0.8}}),
		"another strength": c.Check("abc123", []LoRA{{Path: "/l/style.safetensors", SHA256: "feed", Strength: 1}}),
	} {
		if !errors.Is(err, ErrOther) || !strings.Contains(err.Error(), ":") {
			t.Errorf("%s: %v, want ErrOther with a sentence", name, err)
		}
	}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	newer := append([]byte(nil), b...)
	newer[len(magic)] = Version + 1
	altered := append([]byte(nil), b...)
	altered[len(b)/2] ^= 1
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"truncated": {b[:len(b)-100], ErrCorrupt},
		"cut short": {b[:10], ErrCorrupt},
		"altered":   {altered, ErrCorrupt},
		"empty":     {nil, ErrCorrupt},
		"newer":     {newer, ErrNewer},
	} {
		path := filepath.Join(dir, name+".ckpt")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(path)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		if _, serr := os.Stat(path); serr != nil {
			t.Errorf("%s: the refused file is gone: %v", name, serr)
		}
	}
}

// FuzzUnmarshal: any bytes give a checkpoint or an error, never a panic or a huge allocation,
// and a decoded checkpoint encodes again. The fuzzer's bytes are the body: the test appends the
// right checksum half the time, so the header and arrays are explored past the checksum.
func FuzzUnmarshal(f *testing.F) {
	b, _ := sample().Marshal()
	body := b[:len(b)-sha256.Size]
	f.Add(body, true)
	f.Add(body[:len(body)/2], true)
	f.Add(b, false)
	f.Add([]byte(magic), true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, sum bool) {
		if sum {
			s := sha256.Sum256(data)
			data = append(data[:len(data):len(data)], s[:]...)
		}
		c, err := Unmarshal(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewer) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		if _, err := c.Marshal(); err != nil {
			t.Fatalf("a decoded checkpoint does not encode: %v", err)
		}
	})
}

// TestStoredCopyWhenSourceGone: an input moved away or changed is read from the copy beside the
// checkpoint; Remove deletes the checkpoint and its copies.
func TestStoredCopyWhenSourceGone(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "cat.png")
	os.WriteFile(src, []byte("the picture"), 0o644)
	ck := filepath.Join(dir, "run.ckpt")
	f, err := Store(ck, "image", src, []byte("the picture"))
	if err != nil {
		t.Fatal(err)
	}
	if got, moved, err := Source(ck, f); err != nil || moved || got != src {
		t.Fatalf("source in place: %s %v %v", got, moved, err)
	}
	os.WriteFile(src, []byte("another picture"), 0o644)
	got, moved, err := Source(ck, f)
	if err != nil || !moved || filepath.Base(got) != "cat.png" {
		t.Fatalf("source changed: %s %v %v", got, moved, err)
	}
	if b, _ := os.ReadFile(got); string(b) != "the picture" {
		t.Errorf("the stored copy holds %q", b)
	}
	os.Remove(src)
	if _, moved, err := Source(ck, f); err != nil || !moved {
		t.Fatalf("source gone: %v %v", moved, err)
	}
	if err := WriteFile(ck, sample()); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ck); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left after Remove: %v", left)
	}
}

// faultyFile fails its writes with err.
type faultyFile struct {
	*os.File
	err error
}

func (f faultyFile) Write([]byte) (int, error) { return 0, f.err }

// withFault makes every checkpoint write fail with err (ENOSPC: the disk is full) or, for a
// folder that cannot be written, the temporary file's creation.
func withFault(t *testing.T, err error, atCreate bool) {
	old := createTemp
	t.Cleanup(func() { createTemp = old })
	createTemp = func(dir, pattern string) (tempFile, error) {
		if atCreate {
			return nil, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		f, e := os.CreateTemp(dir, pattern)
		if e != nil {
			return nil, e
		}
		return faultyFile{f, err}, nil
	}
}

// TestDiskFullSkipsAndSaysOnce: with the disk full every checkpoint is skipped, the notice comes
// once, no temporary file is left, and writing resumes when space is back.
func TestDiskFullSkipsAndSaysOnce(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(filepath.Join(dir, "run.ckpt"))
	var mu sync.Mutex
	var notices []string
	w.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	withFault(t, syscall.ENOSPC, false)
	for range 3 {
		w.Offer(sample)
		w.Wait()
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "full") {
		t.Errorf("notices %q, want one about the full disk", notices)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	createTemp = func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }
	written := 0
	w.Written = func(*Checkpoint) { written++ }
	w.Offer(sample)
	w.Wait()
	if written != 1 || w.Off() {
		t.Errorf("after space is back: %d written, off %v", written, w.Off())
	}
}

// TestReadOnlyFolderTurnsCheckpointsOff: a folder that cannot be written turns checkpoints off
// with one notice, and later states are not even built.
func TestReadOnlyFolderTurnsCheckpointsOff(t *testing.T) {
	w := NewWriter(filepath.Join(t.TempDir(), "run.ckpt"))
	var notices []string
	w.Notice = func(s string) { notices = append(notices, s) }
	withFault(t, syscall.EROFS, true)
	w.Offer(sample)
	w.Wait()
	built := false
	w.Offer(func() *Checkpoint { built = true; return sample() })
	w.Wait()
	if !w.Off() || built || len(notices) != 1 || !strings.Contains(notices[0], "off") {
		t.Errorf("off %v, built after %v, notices %q", w.Off(), built, notices)
	}
}

// TestOneWriteInFlight: a state offered while a write is in flight is skipped without being
// built, and the next one after it finishes is written.
func TestOneWriteInFlight(t *testing.T) {
	w := NewWriter(filepath.Join(t.TempDir(), "run.ckpt"))
	release := make(chan struct{})
	writing := make(chan struct{})
	old := createTemp
	t.Cleanup(func() { createTemp = old })
	createTemp = func(dir, pattern string) (tempFile, error) {
		close(writing)
		<-release
		return os.CreateTemp(dir, pattern)
	}
	w.Offer(sample)
	<-writing
	built := false
	if w.Offer(func() *Checkpoint { built = true; return sample() }) || built {
		t.Error("a second write started while one was in flight")
	}
	close(release)
	w.Wait()
	createTemp = old
	if !w.Offer(sample) {
		t.Error("no write after the first finished")
	}
	w.Wait()
	if w.Skipped() != 1 {
		t.Errorf("%d skipped, want 1", w.Skipped())
	}
	if _, err := Read(w.Path()); err != nil {
		t.Error(err)
	}
}
