package upscale

import (
	"path/filepath"
	"strings"

	"easel/app/upscalers"
)

// Dropped sorts a dropped file off the UI goroutine: an upscaler file Easel runs is taken (to
// ask about, in ups); a .pth that is not one is taken with a message saying so (in refusals);
// anything else (a .safetensors LoRA, a picture) is left to the other drops.
func Dropped(path string, ups *[]upscalers.Entry, refusals *[]string) bool {
	if !upscalers.IsUpscalerFile(path) {
		return false
	}
	e, err := upscalers.Inspect(path)
	switch {
	case err == nil:
		*ups = append(*ups, e)
		return true
	case strings.EqualFold(filepath.Ext(path), ".pth"):
		*refusals = append(*refusals, Refusal(path, err))
		return true
	}
	return false // a .safetensors that is not an upscaler: a LoRA, as before
}

// AskAdd asks, one file at a time, whether to add each dropped upscaler to the upscalers
// folder (Esc or Not now: not added); each added file is said in the notice.
func (u *Upscaling) AskAdd(ups []upscalers.Entry) {
	if len(ups) == 0 {
		return
	}
	lib := u.host.Library()
	if lib == nil {
		u.say("The upscalers folder cannot be found (set $HOME): %s was not added.", filepath.Base(ups[0].Path))
		return
	}
	e, rest := ups[0], ups[1:]
	u.host.Ask(AddQuestion(e, filepath.Base(lib.Dir), u.host.Parent, func(add bool) {
		if !add {
			u.AskAdd(rest)
			return
		}
		go func() {
			added, err := lib.Add(e.Path)
			u.host.Do(func() {
				if err != nil {
					u.say("%s was not added: %v", filepath.Base(e.Path), err)
				} else {
					u.inform("%s", Added(added))
				}
				u.AskAdd(rest)
			})
		}()
	}))
}
