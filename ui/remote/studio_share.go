package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/settings"
	macs "easel/app/studio"
	"easel/ui/model"
)

// studioShare is Easel → Studio…'s "Be the studio's hub": a hub on this Mac (TLS, a fresh token)
// whose address, token and pairing fingerprint the other Macs need, and the Studio panel of the
// Macs that joined it (`easel studio join` on each, or Lend this Mac in their windows). Its words
// are the dialog's other sections' (Hub address, Token, Pairing fingerprint); it does not say
// "Share this Mac", which in Settings means other machines render on this one.
type studioShare struct {
	dataDir, listen string
	do              func(func()) // runs on the UI goroutine

	check                       *widget.Check
	address, token, fingerprint *widget.Label
	copyToken                   *widget.Button // puts the token on the clipboard; off while there is none
	err                         *widget.Label
	panel                       *MacsPanel

	mu   sync.Mutex
	hub  *macs.Hub
	conn *macs.Conn
	stop context.CancelFunc
}

func newStudioShare(dataDir, listen string, do func(func())) *studioShare {
	s := &studioShare{dataDir: dataDir, listen: listen, do: do,
		address: widget.NewLabel(""), token: widget.NewLabel(""), fingerprint: widget.NewLabel(""), err: widget.NewLabel(""),
		panel: NewMacsPanel()}
	for _, l := range []*widget.Label{s.address, s.token, s.fingerprint} {
		l.Selectable = true
	}
	s.copyToken = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(s.token.Text)
	})
	s.copyToken.Disable()
	s.err.Wrapping = fyne.TextWrapWord
	s.check = widget.NewCheck("Be the studio's hub (other Macs join this one)", func(on bool) {
		if err := s.setOn(on); err != nil {
			s.err.SetText(err.Error())
			s.check.SetChecked(false)
		}
	})
	return s
}

// setOn starts or stops the hub.
func (s *studioShare) setOn(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !on {
		if s.stop != nil {
			s.stop()
			s.conn.Close()
			s.hub.Close()
			s.hub, s.conn, s.stop = nil, nil, nil
		}
		s.address.SetText("")
		s.token.SetText("")
		s.copyToken.Disable()
		s.fingerprint.SetText("")
		return nil
	}
	if s.hub != nil {
		return nil
	}
	var b [16]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	// A taken port is found at once (the hub itself only says so after waiting to listen).
	probe, err := net.Listen("tcp", s.listen)
	if err != nil {
		return errors.New(plainHubStart(err, s.listen))
	}
	probe.Close()
	hub, err := macs.StartHub(macs.HubConfig{Listen: s.listen, Token: token, TLS: true, Data: s.dataDir})
	if err != nil {
		return errors.New(plainHubStart(err, s.listen))
	}
	conn, err := hub.Connect(macs.RoleClient)
	if err != nil {
		hub.Close()
		return errors.New(plainHubStart(err, s.listen))
	}
	ctx, stop := context.WithCancel(context.Background())
	s.hub, s.conn, s.stop = hub, conn, stop
	s.address.SetText(hub.URL())
	s.token.SetText(token)
	s.copyToken.Enable()
	s.fingerprint.SetText(hub.Fingerprint)
	s.err.SetText("")
	go s.poll(ctx, conn)
	return nil
}

// poll refreshes the Studio panel every 2 s while the hub runs.
func (s *studioShare) poll(ctx context.Context, conn *macs.Conn) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		s.refresh(ctx, conn)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refresh reads the studio's status once and shows it.
func (s *studioShare) refresh(ctx context.Context, conn *macs.Conn) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := conn.Status(rctx)
	if err != nil || ctx.Err() != nil {
		return
	}
	s.do(func() { s.panel.Show(st) })
}

func (s *studioShare) content() fyne.CanvasObject {
	form := widget.NewForm(
		widget.NewFormItem("Hub address", s.address),
		widget.NewFormItem("Token", container.NewBorder(nil, nil, nil, s.copyToken, s.token)),
		widget.NewFormItem("Pairing fingerprint", s.fingerprint))
	help := widget.NewLabel("On each other Mac: easel studio join ADDRESS --token TOKEN --pin FINGERPRINT --model M.cmf")
	help.Wrapping = fyne.TextWrapWord
	return container.NewVBox(s.check, form, help, s.err, s.panel.Box)
}

// close stops the hub (the window is closing).
func (s *studioShare) close() { s.setOn(false) }

// StudioMenuItem opens Settings → Studio.
func (w *Work) StudioMenuItem() *fyne.MenuItem {
	return fyne.NewMenuItem("Studio…", func() {
		if w.studioShare == nil {
			dir, err := settings.Dir()
			if err != nil {
				w.say(model.NoticeWarning, "The studio needs the app-support folder: %v", err)
				return
			}
			w.studioShare = newStudioShare(filepath.Join(dir, "studio"), "0.0.0.0:4222", w.sh.Do)
		}
		d := dialog.NewCustom("Studio", "Close", container.NewVScroll(container.NewVBox(w.studioShare.content(), w.RenderOn().form(), w.Lend().form())), w.sh.Window)
		d.Resize(fyne.NewSize(560, 480))
		w.sh.Show(d)
	})
}

// plainHubStart says why the studio's hub could not start on this Mac, and what to do.
func plainHubStart(err error, listen string) string {
	_, port, _ := net.SplitHostPort(listen)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("The studio hub could not start: port %s on this Mac is taken by another program (perhaps another hub, or easel studio hub): quit it, then tick the box again.", port)
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("The studio hub could not start: it may not use port %s or its folder on this Mac (%v).", port, err)
	}
	return fmt.Sprintf("The studio hub could not start (%v): tick the box again, or restart Easel if it keeps failing.", err)
}
