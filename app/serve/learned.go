package serve

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"easel/app/upscalers"
	"easel/engine/upscale"
)

// learnedCache keeps the learned upscaler used last loaded (a full-size RRDBNet is ~67 MB to read
// and detect), reloaded when another one is asked for or its file changed.
type learnedCache struct {
	mu     sync.Mutex
	path   string
	mtime  time.Time
	runner *upscalers.Runner
}

// runner is the loaded upscaler of e.
func (s *Server) learnedRunner(e upscalers.Entry) (*upscalers.Runner, error) {
	c := &s.learned
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := os.Stat(e.Path)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", e.Name, err)
	}
	if c.runner != nil && c.path == e.Path && c.mtime.Equal(st.ModTime()) {
		return c.runner, nil
	}
	if c.runner != nil {
		c.runner.Close()
		c.runner = nil
	}
	r, err := upscalers.Open(e.Path, s.cfg.UpscaleDevice)
	if err != nil {
		return nil, err
	}
	c.path, c.mtime, c.runner = e.Path, st.ModTime(), r
	return r, nil
}

// closeLearned frees the loaded upscaler (Server.Close).
func (s *Server) closeLearned() {
	s.learned.mu.Lock()
	defer s.learned.mu.Unlock()
	if s.learned.runner != nil {
		s.learned.runner.Close()
		s.learned.runner = nil
	}
}

// learnedEntries are the usable files of the upscalers folder (none without one).
func (s *Server) learnedEntries() []upscalers.Entry {
	if s.cfg.Upscalers == nil {
		return nil
	}
	es, _ := s.cfg.Upscalers.Usable()
	return es
}

// a1111Family is what an upscaler name A1111 (or Forge) lists by default stands for: the network
// family and scale Easel can substitute from the upscalers folder (arch "" for one Easel does not
// run: SwinIR, LDSR, ScuNET, DAT, HAT; latent for the hi-res pass's latent upscalers).
type a1111Family struct {
	arch   upscale.Arch
	scale  int
	prefer string // a name fragment to prefer among files of the family ("realesr")
	latent bool
}

var a1111Upscalers = map[string]a1111Family{
	"esrgan_4x":                      {arch: upscale.RRDBNet, scale: 4},
	"esrgan 4x":                      {arch: upscale.RRDBNet, scale: 4},
	"r-esrgan 4x+":                   {arch: upscale.RRDBNet, scale: 4, prefer: "realesrgan_x4plus"},
	"r-esrgan 4x+ anime6b":           {arch: upscale.RRDBNet, scale: 4, prefer: "anime"},
	"r-esrgan 2x+":                   {arch: upscale.RRDBNet, scale: 2, prefer: "realesrgan_x2plus"},
	"r-esrgan general 4xv3":          {arch: upscale.SRVGGNetCompact, scale: 4, prefer: "general"},
	"r-esrgan general wdn 4xv3":      {arch: upscale.SRVGGNetCompact, scale: 4, prefer: "wdn"},
	"r-esrgan animevideo":            {arch: upscale.SRVGGNetCompact, scale: 4, prefer: "anime"},
	"4x-ultrasharp":                  {arch: upscale.RRDBNet, scale: 4, prefer: "ultrasharp"},
	"4x_nmkd-superscale-sp_178000_g": {arch: upscale.RRDBNet, scale: 4, prefer: "superscale"},
	"swinir_4x":                      {},
	"swinir 4x":                      {},
	"ldsr":                           {},
	"scunet":                         {},
	"scunet gan":                     {},
	"scunet psnr":                    {},
	"dat x2":                         {},
	"dat x3":                         {},
	"dat x4":                         {},
	"hat":                            {},
	"lanczos (antialiased)":          {},
	"latent":                         {latent: true},
	"latent (antialiased)":           {latent: true},
	"latent (bicubic)":               {latent: true},
	"latent (bicubic antialiased)":   {latent: true},
	"latent (nearest)":               {latent: true},
	"latent (nearest-exact)":         {latent: true},
}

// resolveUpscaler finds an upscaler by name: a built-in resampler, a file of the upscalers folder,
// or, for a name A1111 lists by default, a file of the same family (else Lanczos) with a warning
// saying what was used instead. ok is false for a name that is none of these (a 422 then).
func (s *Server) resolveUpscaler(name string) (u upscaler, warning string, ok bool) {
	n := strings.TrimSpace(name)
	for _, b := range upscalerList {
		if strings.EqualFold(b.Name, n) {
			return b, "", true
		}
	}
	entries := s.learnedEntries()
	for _, e := range entries {
		if strings.EqualFold(e.Name, n) || strings.EqualFold(e.Name+".pth", n) || strings.EqualFold(e.Name+".safetensors", n) {
			return learnedUpscaler(e), "", true
		}
	}
	fam, known := a1111Upscalers[strings.ToLower(n)]
	if !known {
		return upscaler{}, "", false
	}
	lanczos := upscalerList[1]
	if fam.arch != "" {
		if e, found := pickFamily(entries, fam); found {
			return learnedUpscaler(e), fmt.Sprintf("upscaler %q is not installed: %s (%s) from the upscalers folder was used instead", n, e.Name, e.Config), true
		}
	}
	why := "Easel does not run that network"
	switch {
	case fam.latent:
		why = "Easel's hi-res pass resizes the image, not the latents"
	case fam.arch != "":
		why = fmt.Sprintf("no %s ×%d file is in the upscalers folder (easel serve --upscalers DIR)", fam.arch, fam.scale)
	}
	return lanczos, fmt.Sprintf("upscaler %q is not available (%s): Lanczos was used", n, why), true
}

// pickFamily is the best file of a family: same architecture, the asked scale first, then a name
// holding the preferred fragment, then the first by name.
func pickFamily(entries []upscalers.Entry, fam a1111Family) (upscalers.Entry, bool) {
	best, score := upscalers.Entry{}, -1
	for _, e := range entries {
		if e.Config == nil || e.Config.Arch != fam.arch {
			continue
		}
		sc := 0
		if e.Config.Scale == fam.scale {
			sc += 2
		}
		if fam.prefer != "" && strings.Contains(strings.ToLower(e.Name), fam.prefer) {
			sc++
		}
		if sc > score {
			best, score = e, sc
		}
	}
	return best, score >= 0
}

func learnedUpscaler(e upscalers.Entry) upscaler {
	return upscaler{Name: e.Name, Learned: &e}
}
