package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"easel/engine/lora"
	"easel/engine/qi21"
)

// ErrLoRA is the kind of error a request's LoRA files give: missing, unreadable, or made for
// another model.
var ErrLoRA = errors.New("unusable LoRA")

// LoRAFile is a LoRA the pipeline loads itself (Request.LoRAFiles), at a strength.
type LoRAFile struct {
	Path     string
	Strength float64
}

// LoRAUsed is a LoRA file a run applied (Result.LoRAs): what an image records of it.
type LoRAUsed struct {
	Path, SHA256, ShortHash string
	Strength                float64
	Preset                  *lora.Preset
}

// loraCache keeps the LoRA files the pipeline loaded: a file is read again only when its size
// or modification time changed, so generating again or changing a strength reloads nothing.
type loraCache struct {
	mu    sync.Mutex
	files map[string]cachedLoRA
}

type cachedLoRA struct {
	f       *lora.File
	size    int64
	modTime int64
}

// LoadLoRA reads a LoRA file bound to this pipeline's denoiser (from the cache when unchanged).
func (p *Pipeline) LoadLoRA(path string) (*lora.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s cannot be read: %v", ErrLoRA, path, err)
	}
	c := &p.loras
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.files[path]; ok && e.size == st.Size() && e.modTime == st.ModTime().UnixNano() {
		return e.f, nil
	}
	f, err := lora.Open(path, p.LoRALayers())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoRA, err)
	}
	if c.files == nil {
		c.files = map[string]cachedLoRA{}
	}
	c.files[path] = cachedLoRA{f, st.Size(), st.ModTime().UnixNano()}
	return f, nil
}

// requestLoRAs is the request's LoRAs for the denoiser: LoRAs, then LoRAFiles loaded; what the
// files were, for the result; and a sentence for each file that matched only partly.
func (p *Pipeline) requestLoRAs(r *Request) ([]qi21.LoRA, []LoRAUsed, []string, error) {
	ls := append([]qi21.LoRA(nil), r.LoRAs...)
	var used []LoRAUsed
	var notes []string
	for _, lf := range r.LoRAFiles {
		f, err := p.LoadLoRA(lf.Path)
		if err != nil {
			return nil, nil, nil, err
		}
		if w := f.Report.Warning(); w != "" {
			notes = append(notes, fmt.Sprintf("LoRA %s: %s", filepath.Base(lf.Path), w))
		}
		ls = append(ls, qi21.LoRA{Adapter: f.Adapter, Strength: float32(lf.Strength)})
		used = append(used, LoRAUsed{Path: lf.Path, SHA256: f.SHA256, ShortHash: f.ShortHash, Strength: lf.Strength, Preset: f.Preset})
	}
	return ls, used, notes, nil
}
