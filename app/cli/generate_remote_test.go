package cli

import (
	"bytes"
	"image"
	"image/color"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/jobs"
	"easel/app/serve"
)

// TestGenerateRenderOnEqualsTheLocalEdit: a masked, feathered and extended edit made with
// --render-on (another Easel's server over the same model, with its token) is the picture the
// same command makes here, bit for bit: the server returns the model's picture and the paste-back
// happens here, once, as after a local run.
func TestGenerateRenderOnEqualsTheLocalEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model twice")
	}
	model := tinyCMF(t)
	gen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { gen.Close() })
	q := jobs.New(gen, nil)
	t.Cleanup(q.Close)
	srv, err := serve.New(serve.Config{Queue: q, Model: model, Auth: serve.Auth{Token: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	dir := t.TempDir()
	init := writePNG(t, dir, "start.png", startPicture())
	b := startPicture().Rect
	mask := image.NewGray(b)
	for y := b.Dy() / 4; y < b.Dy()/2; y++ {
		for x := b.Dx() / 4; x < b.Dx()*3/4; x++ {
			mask.SetGray(x, y, color.Gray{255})
		}
	}
	maskPath := writePNG(t, dir, "mask.png", mask)
	args := []string{"generate", "--prompt", "a harbour at dusk", "--steps", "3", "--seed", "5", "--init", init,
		"--mask", maskPath, "--mask-blur", "6", "--mask-grow", "4", "--extend", "0,0,64,0"}
	local := filepath.Join(dir, "local.png")
	if code, _, stderr := run(append(args, "--model", model, "--out", local)...); code != ExitOK {
		t.Fatalf("here: exit %d: %s", code, stderr)
	}
	remote := filepath.Join(dir, "remote.png")
	if code, _, stderr := run(append(args, "--render-on", hs.Listener.Addr().String(), "--token", "s3cret", "--out", remote)...); code != ExitOK {
		t.Fatalf("--render-on: exit %d: %s", code, stderr)
	}
	if js := q.Jobs(); len(js) != 1 || js[0].State != jobs.Done {
		t.Fatalf("the server ran %d jobs", len(js))
	}
	l, r := readPNG(t, local), readPNG(t, remote)
	if l.Rect != r.Rect || !bytes.Equal(l.Pix, r.Pix) {
		diff := 0
		for i := 0; i+4 <= min(len(l.Pix), len(r.Pix)); i += 4 {
			if !bytes.Equal(l.Pix[i:i+4], r.Pix[i:i+4]) {
				diff++
			}
		}
		t.Errorf("--render-on made %v, here %v; %d pixels differ", r.Rect, l.Rect, diff)
	}

	// A wrong token and a machine that is not there say so, with their exit code.
	code, _, stderr := run(append(args, "--render-on", hs.Listener.Addr().String(), "--token", "wrong", "--out", filepath.Join(dir, "x.png"))...)
	if code != ExitRemote || !strings.Contains(stderr, "not written") {
		t.Errorf("a wrong token: exit %d, %q", code, stderr)
	}
	code, _, stderr = run(append(args, "--render-on", "127.0.0.1:1", "--out", filepath.Join(dir, "y.png"))...)
	if code != ExitRemote || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("no server: exit %d, %q", code, stderr)
	}
}
