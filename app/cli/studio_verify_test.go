package cli

import (
	"easel/app/studiogen"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/cmf"
)

// A Mac whose copy of the model is damaged in a tensor's payload (the fingerprint does not see
// it) is refused before it joins; a sound copy is verified once and remembered.
func TestStudioJoinRefusesDamagedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the tiny model")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	good := tinyCMF(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries()[len(f.Entries())/2]
	at := f.Envelope().Data.Off + e.Offset + e.Size/2
	fp := modelFingerprint(f)
	f.Close()
	damaged := filepath.Join(t.TempDir(), "damaged.cmf")
	data[at] ^= 0x01
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if df, err := cmf.Open(damaged); err != nil || modelFingerprint(df) != fp {
		t.Fatalf("the damaged copy should open with the good fingerprint: %v", err)
	} else {
		df.Close()
	}
	// no hub is needed: the model is verified before the worker dials
	code, _, stderr := run("studio", "join", "nats://127.0.0.1:1", "--model", damaged, "--name", "mac")
	if code != ExitModelInvalid || !strings.Contains(stderr, "damaged") {
		t.Fatalf("a damaged copy: exit %d: %s", code, stderr)
	}
	t.Logf("refused: %s", strings.TrimSpace(stderr))
	if f := verifyModelOnce(t.Context(), good, os.Stderr); f != nil {
		t.Fatalf("the sound copy: %v", f.err)
	}
	b, err := os.ReadFile(studiogen.VerifiedCachePath())
	if err != nil || !strings.Contains(string(b), filepath.Base(good)) || strings.Contains(string(b), "damaged") {
		t.Fatalf("the remembered files: %s (%v)", b, err)
	}
}
