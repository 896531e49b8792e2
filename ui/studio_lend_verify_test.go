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
// from returning other pixels. Lending is refused with a sentence that says what to do, the box
// is unticked, and the window never joins, so it takes nothing from the studio.
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
	l := h.s.remote.Lend()
	l.URL.SetText(hub.URL())
	l.Token.SetText(studioUIToken)
	test.Tap(l.Check)
	sess := l.Session()
	if sess == nil {
		t.Fatalf("lending did not start: %q", l.Err.Text)
	}
	h.pump("lending refused for the damaged model", func() bool { return strings.Contains(l.Err.Text, "cannot lend") })
	want := "This Mac cannot lend: the model file damaged.cmf is damaged"
	if l.Check.Checked || l.Session() != nil || !strings.HasPrefix(l.Err.Text, want) || !strings.Contains(l.Err.Text, "Copy it again") {
		t.Fatalf("after the refusal: checked %v, lent %v, %q", l.Check.Checked, l.Session() != nil, l.Err.Text)
	}
	if strings.Contains(h.s.network.Text, "Lent") {
		t.Errorf("the indicator still says lent: %q", h.s.network.Text)
	}
	pumpUntil(h, "the refused worker gone", sess.Done())
	for _, ev := range l.Events {
		if ev.Kind == "joined" || ev.Kind == "taken" {
			t.Fatalf("the window joined the studio with a damaged model: %+v", l.Events)
		}
	}
	t.Logf("refused: %s", l.Err.Text)
}
