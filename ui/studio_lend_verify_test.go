package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	macs "easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/cmf"
)

// A window lent to a studio checks its whole model file first, as easel studio join does: a copy
// with one payload byte flipped opens with the good fingerprint, so only the check can keep it
// from returning other pixels. Lending is refused with a sentence, and the window never joins.
func TestLendingRefusesADamagedModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // nothing remembered as sound
	good := tinyModelPath(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries()[len(f.Entries())/2]
	data[f.Envelope().Data.Off+e.Offset+e.Size/2] ^= 0x01
	f.Close()
	damaged := filepath.Join(t.TempDir(), "damaged.cmf")
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	goodFP, err := studiogen.ModelFingerprint(good)
	if err != nil {
		t.Fatal(err)
	}
	if fp, err := studiogen.ModelFingerprint(damaged); err != nil || fp != goodFP {
		t.Fatalf("the damaged copy should keep the good fingerprint: %v", err)
	}

	h := newHarnessWith(t, 0, func(_ *harness, d *Deps) { d.Settings.Model = damaged })
	h.patience = 3 * time.Minute // a bound for a busy machine: the wait is on the refusal
	hub, err := macs.StartHub(macs.HubConfig{Listen: "127.0.0.1:0", Token: studioUIToken, Data: t.TempDir(), AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	l := h.s.lend()
	l.URL.SetText(hub.URL())
	l.Token.SetText(studioUIToken)
	test.Tap(l.check)
	h.pump("lending refused for the damaged model", func() bool { return strings.Contains(l.err.Text, "cannot lend") })
	if l.check.Checked || !strings.Contains(l.err.Text, "copy it again") {
		t.Fatalf("after the refusal: checked %v, %q", l.check.Checked, l.err.Text)
	}
	for _, ev := range l.events {
		if ev.Kind == "joined" {
			t.Fatalf("the window joined the studio with a damaged model: %+v", l.events)
		}
	}
	t.Logf("refused: %s", l.err.Text)
}
