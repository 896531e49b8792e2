package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"easel/app/serve"
	"easel/app/settings"
	"easel/ui/model"
)

// sharing is the window's "Share this Mac" server.
type sharing struct {
	srv   *serve.Server
	addr  string // as the settings give it
	bound string // the address it listens on
	done  chan error
}

// SharedOn is the address the window's server listens on while this Mac is shared ("" when not).
func (w *Work) SharedOn() string {
	if w.share == nil {
		return ""
	}
	return w.share.bound
}

// ApplyNetwork brings rendering and sharing in line with the settings (at start and after the
// settings dialog saved).
func (w *Work) ApplyNetwork(ns settings.Settings) {
	w.Router.Set(ns.RenderOn, ns.RenderToken)
	defer w.ShowNetwork()
	want := ns.Share && ns.Model != ""
	addr := ns.ShareAddr
	if addr == "" {
		addr = settings.DefaultShareAddr
	}
	if w.share != nil && (!want || w.share.addr != addr) {
		w.stopSharing()
	}
	if want && w.share == nil {
		if err := w.startSharing(ns, addr); err != nil {
			w.say(model.NoticeWarning, "This Mac is not shared: %v", err)
		}
	}
}

// startSharing serves the A1111 API on addr over the window's queue, with the share token (made
// and saved when there is none).
func (w *Work) startSharing(ns settings.Settings, addr string) error {
	if ns.ShareToken == "" {
		var b [16]byte
		rand.Read(b[:])
		ns.ShareToken = hex.EncodeToString(b[:])
		if err := w.sh.KeepSettings(ns); err != nil {
			return fmt.Errorf("the share token could not be saved: %v", err)
		}
	}
	cfg := serve.Config{Queue: w.sh.Queue, Model: ns.Model, LoRADir: w.sh.LoRADir, Backend: ns.Backend,
		Auth: serve.Auth{Token: ns.ShareToken}, Log: log.Default(), Preview: w.sh.Preview}
	srv, err := serve.New(cfg)
	if err != nil {
		return err
	}
	ln, err := srv.Listen(addr, "", "")
	if err != nil {
		srv.Close()
		return err
	}
	sh := &sharing{srv: srv, addr: addr, bound: ln.Addr().String(), done: make(chan error, 1)}
	go func() { sh.done <- srv.Serve(ln) }()
	w.share = sh
	w.say(model.NoticeInfo, "%s is shared on %s (port %s): %s", w.sh.Machine, addr, portOf(ln.Addr()), shareReach(addr))
	return nil
}

// stopSharing stops the server; its API jobs are cancelled.
func (w *Work) stopSharing() {
	if w.share == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.share.srv.Shutdown(ctx)
	<-w.share.done
	w.share = nil
	w.ShowNetwork()
}

func portOf(a net.Addr) string {
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return port
}

// shareReach says who can render on a shared address: a loopback one is this machine's alone.
func shareReach(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err == nil {
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return "only programs on this machine can use it (a loopback address)."
		}
	}
	return "other machines render here with the share token."
}

// ShowNetwork keeps the indicator under the canvas true: where jobs render, and whether this
// machine is shared or lent.
func (w *Work) ShowNetwork() {
	var parts []string
	if where := w.Router.Where(); where != "" {
		parts = append(parts, "Rendering on "+where)
	}
	if w.share != nil {
		parts = append(parts, "Shared on "+w.share.bound)
	}
	if l := w.lentLine(); l != "" { // studio_lend.go
		parts = append(parts, l)
	}
	w.Network.SetText(strings.Join(parts, " · "))
	w.Network.Hidden = len(parts) == 0
	w.Network.Refresh()
}
