package ui

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
)

// sharing is the window's "Share this Mac" server.
type sharing struct {
	srv   *serve.Server
	addr  string // as the settings give it
	bound string // the address it listens on
	done  chan error
}

func (sh *sharing) listenAddr() string { return sh.bound }

// applyNetwork brings rendering and sharing in line with the settings (at start and after the
// settings dialog saved).
func (s *window) applyNetwork(ns settings.Settings) {
	s.router.Set(ns.RenderOn, ns.RenderToken)
	defer s.showNetwork()
	want := ns.Share && ns.Model != ""
	addr := ns.ShareAddr
	if addr == "" {
		addr = settings.DefaultShareAddr
	}
	if s.share != nil && (!want || s.share.addr != addr) {
		s.stopSharing()
	}
	if want && s.share == nil {
		if err := s.startSharing(ns, addr); err != nil {
			s.say("This Mac is not shared: %v", err)
		}
	}
}

// startSharing serves the A1111 API on addr over the window's queue, with the share token (made
// and saved when there is none).
func (s *window) startSharing(ns settings.Settings, addr string) error {
	if ns.ShareToken == "" {
		var b [16]byte
		rand.Read(b[:])
		ns.ShareToken = hex.EncodeToString(b[:])
		if s.deps.Store != nil {
			if err := s.deps.Store.Save(ns); err != nil {
				return fmt.Errorf("the share token could not be saved: %v", err)
			}
		}
		s.deps.Settings = ns
	}
	cfg := serve.Config{Queue: s.queue, Model: ns.Model, LoRADir: s.deps.LoRADir, Backend: ns.Backend,
		Auth: serve.Auth{Token: ns.ShareToken}, Log: log.Default()}
	if s.deps.Calibrator != nil {
		cfg.Preview = s.deps.Calibrator.Render
	} else if s.deps.Projection != nil {
		cfg.Preview = s.deps.Projection.Image
	}
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
	s.share = sh
	s.sayKind(noticeInfo, "%s is shared on %s (port %s): %s", thisMachine(), addr, portOf(ln.Addr()), shareReach(addr))
	return nil
}

// stopSharing stops the server; its API jobs are cancelled.
func (s *window) stopSharing() {
	if s.share == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.share.srv.Shutdown(ctx)
	<-s.share.done
	s.share = nil
	s.showNetwork()
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

// showNetwork keeps the indicator under the canvas true: where jobs render, and whether this
// machine is shared.
func (s *window) showNetwork() {
	var parts []string
	if where := s.router.Where(); where != "" {
		parts = append(parts, "Rendering on "+where)
	}
	if s.share != nil {
		parts = append(parts, "Shared on "+s.share.bound)
	}
	if l := s.lentLine(); l != "" { // studio_lend.go
		parts = append(parts, l)
	}
	s.network.SetText(strings.Join(parts, " · "))
	s.network.Hidden = len(parts) == 0
	s.network.Refresh()
}
