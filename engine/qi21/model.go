package qi21

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"easel/engine/ml"
	"easel/engine/quant"
)

// Model is a loaded transformer bound to one backend.
type Model struct {
	Config  Config
	Weights Weights
	Blocks  []Block

	be ml.Backend

	mu   sync.Mutex
	live int // programs prefilled and not yet released

	// Steps run one at a time and share one set of target-row activations (under CFG the two
	// programs step in turn), so a second program costs its K/V cache only.
	stepMu      sync.Mutex
	stepScratch *scratch
	stepRows    int
	widen       []float32 // one layer's prefix K or V widened from half, for a step

	// FloatKV keeps programs' prefix K/V in float32 instead of half (halfkv.go): the reference
	// path of the parity tests. Set it before the first Prefill.
	FloatKV bool

	// LoRAs (lora.go): the set, and what each adapted weight adds, by weight.
	loras       []LoRA
	loraLayers  map[*quant.Tensor]*layerLoRA
	loraVersion uint64 // counts SetLoRAs calls
}

// KVElementBytes is the size of one cached key or value of new programs: 2, or 4 under FloatKV.
func (m *Model) KVElementBytes() int {
	if m.FloatKV {
		return 4
	}
	return 2
}

// MaxPrograms is how many programs live at once: the positive and the negative prompt.
const MaxPrograms = 2

// Load binds the transformer's tensors from src (names "dit.*", geometry from dit.config_json).
// Weight payloads stay where src keeps them (a file mapping); only the norm vectors are copied.
func Load(src quant.Source, be ml.Backend) (*Model, error) {
	if src == nil || be == nil {
		return nil, fmt.Errorf("qi21: Load needs a weight source and a backend")
	}
	ct, err := src.Tensor(ConfigTensor)
	if err != nil {
		return nil, fmt.Errorf("qi21: reading %s: %v", ConfigTensor, err)
	}
	if ct == nil {
		return nil, fmt.Errorf("qi21: the model has no %s: it is not a Qwen-Image-2.1 file (convert the snapshot with `easel convert`)", ConfigTensor)
	}
	cfg, err := ParseConfig(ct.Data)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, be: be, Blocks: make([]Block, cfg.Layers)}
	shapes := expectedShapes(cfg)
	b := &ml.Binder{Src: src, B: be, Network: "qi21", Shape: func(name string) ([]int, bool) {
		s, ok := shapes[strings.TrimPrefix(name, "dit.")]
		return s, ok
	}}
	if err := b.Bind(&m.Weights, "dit."); err != nil {
		return nil, err
	}
	for l := range m.Blocks {
		if err := b.Bind(&m.Blocks[l], "dit.transformer_blocks."+strconv.Itoa(l)+"."); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Backend is the backend the model runs on.
func (m *Model) Backend() ml.Backend { return m.be }
