package remote

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	macs "easel/app/studio"
)

// Settings → Studio: sharing starts a hub on loopback (TLS, a fresh token) and shows its
// address, token and pairing fingerprint; a Mac that joins with them appears in the Studio panel
// with its name, chip, model and state; one that leaves mid-job is said in one line; turning
// sharing off stops the hub.
func TestStudioShareShowsPairingAndMacs(t *testing.T) {
	test.NewTempApp(t)
	calls := make(chan func(), 16)
	share := newStudioShare(t.TempDir(), "127.0.0.1:0", func(f func()) {
		select { // a refresh the test does not pump is dropped; the next one shows the same
		case calls <- f:
		default:
		}
	})
	test.NewTempWindow(t, share.content())
	test.Tap(share.check)
	if share.err.Text != "" {
		t.Fatalf("sharing failed: %s", share.err.Text)
	}
	defer share.close()
	if !strings.HasPrefix(share.address.Text, "tls://127.0.0.1:") || len(share.token.Text) != 32 ||
		!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(share.fingerprint.Text) {
		t.Fatalf("pairing shows address %q, token %q, fingerprint %q", share.address.Text, share.token.Text, share.fingerprint.Text)
	}

	// A Mac joins with exactly what the pairing shows.
	c, err := macs.Dial(context.Background(), share.address.Text, macs.DialOptions{Role: macs.RoleWorker, Token: share.token.Text, Pin: share.fingerprint.Text})
	if err != nil {
		t.Fatalf("joining with the shown pairing: %v", err)
	}
	defer c.Close()
	worker := &macs.Worker{Name: "mini", Chip: "M4", Model: "qwen.cmf", Fingerprint: macs.Fingerprint{Easel: "t", Model: "m"},
		Renderer: macs.RenderFunc(func(ctx context.Context, _ *macs.Job, _ macs.Inputs, _ func(macs.Step)) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}), FetchWait: 500 * time.Millisecond}
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); worker.Run(wctx, c) }()
	defer func() { stop(); <-done }()

	// The panel refreshes from the hub every 2 s (on the UI goroutine: here, this one).
	deadline := time.After(30 * time.Second)
	for !strings.Contains(share.panel.Summary(), "1 Macs") {
		select {
		case f := <-calls:
			f()
		case <-deadline:
			t.Fatalf("the Studio panel never showed the Mac: %q", share.panel.Summary())
		}
	}
	if got := share.panel.Rows()[0]; got != "mini · M4 · qwen.cmf · idle · 0 done" {
		t.Errorf("the Mac's row is %q", got)
	}

	// A Mac that leaves while rendering is said in one line.
	share.panel.Show(&macs.Status{Workers: []macs.WorkerStatus{{Name: "air", Model: "qwen.cmf", State: macs.StateRendering, Job: "b/3", Step: 4, Steps: 40}}})
	share.panel.Show(&macs.Status{})
	if share.panel.Left() != "air left while rendering b/3; the image goes to another Mac." {
		t.Errorf("the leave line is %q", share.panel.Left())
	}

	test.Tap(share.check) // off
	if share.address.Text != "" || share.hub != nil {
		t.Errorf("sharing off leaves address %q, hub %v", share.address.Text, share.hub)
	}
}

// Settings → Studio's token has a Copy button, as the share token in Settings has: it puts the
// token on the clipboard, and it is off while there is no token to copy (sharing off).
func TestStudioShareCopiesItsToken(t *testing.T) {
	a := test.NewTempApp(t)
	share := newStudioShare(t.TempDir(), "127.0.0.1:0", func(func()) {})
	test.NewTempWindow(t, share.content())
	if share.copyToken == nil || !share.copyToken.Disabled() {
		t.Fatal("the Studio dialog has no Copy button for its token, or it is on with no token shown")
	}
	test.Tap(share.check)
	if share.err.Text != "" {
		t.Fatalf("sharing failed: %s", share.err.Text)
	}
	defer share.close()
	a.Clipboard().SetContent("something else")
	test.Tap(share.copyToken)
	if got := a.Clipboard().Content(); got != share.token.Text || len(got) != 32 {
		t.Errorf("Copy put %q on the clipboard, want the token %q", got, share.token.Text)
	}
	test.Tap(share.check) // off
	if !share.copyToken.Disabled() {
		t.Error("Copy stays on after sharing stopped and the token was cleared")
	}
}

// A hub that cannot start because its port is taken says so in plain words, with what to do, and
// the box stays unticked.
func TestStudioShareOnATakenPort(t *testing.T) {
	test.NewTempApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	share := newStudioShare(t.TempDir(), ln.Addr().String(), func(func()) {})
	test.NewTempWindow(t, share.content())
	test.Tap(share.check)
	defer share.close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if share.check.Checked || !strings.Contains(share.err.Text, "port "+port+" on this Mac is taken by another program") {
		t.Fatalf("on a taken port: ticked %v, %q", share.check.Checked, share.err.Text)
	}
}
