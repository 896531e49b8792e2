package metal

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DevicePolicy is what was learned about each device: per program ("denoiser", "metalops"), the
// command-buffer level the GPU's watchdog let pass (0: the program's default; each program says
// what its levels are — the denoiser: 1 one block per command buffer, 2 and 3 the large GEMMs in
// row chunks each in its own buffer). Programs read it before encoding, so a watchdog stop is
// retried once per device, not once per step.
//
// With Persist, the levels are remembered across processes: one small JSON file per device in a
// folder of the app-support folder (recovery/), keyed like the self-test's cache by the device's
// name, the OS build, the app version and BuildID (a new macOS, a new Easel or a changed kernel
// starts from the defaults again), loaded the first time a device is asked about and written at every Remember.
type DevicePolicy struct {
	mu sync.Mutex
	// levels per device name, then per program
	levels map[string]map[string]int
	// dir, osBuild and appVersion locate the persisted files ("" dir: process lifetime only);
	// loaded are the devices whose file was read
	dir, osBuild, appVersion string
	build                    string // BuildID() from Persist
	loaded                   map[string]bool
}

// Policies is the process's DevicePolicy.
var Policies = &DevicePolicy{}

// PolicyFolder is the app-support folder's subfolder where the levels are persisted.
const PolicyFolder = "recovery"

// PersistedPolicy is a DevicePolicy over the levels persisted in appSupport's PolicyFolder for
// this OS build and app version (what the next process starts from; for diagnostics).
func PersistedPolicy(appSupport, osBuild, appVersion string) *DevicePolicy {
	p := &DevicePolicy{}
	p.Persist(filepath.Join(appSupport, PolicyFolder), osBuild, appVersion)
	return p
}

// PolicyKey names one device's remembered levels.
type PolicyKey struct {
	Device     string `json:"device"`
	OSBuild    string `json:"os_build"`
	AppVersion string `json:"app_version"`
	Build      string `json:"build"` // BuildID(): the kernel sources and the build's revision
}

// ID is a file-name-safe digest of the key.
func (k PolicyKey) ID() string { return keyID(k) }

// policyFile is one device's persisted levels.
type policyFile struct {
	Key    PolicyKey      `json:"key"`
	When   time.Time      `json:"when"`
	Levels map[string]int `json:"levels"`
}

// Persist makes p remember its levels in dir (created when first written) for this OS build and
// app version (and BuildID); each device's file is read the next time the device is asked about (levels learned
// in this process stay when higher). An empty dir keeps the levels for the process's life only.
func (p *DevicePolicy) Persist(dir, osBuild, appVersion string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == dir && p.osBuild == osBuild && p.appVersion == appVersion {
		return
	}
	p.dir, p.osBuild, p.appVersion, p.build = dir, osBuild, appVersion, BuildID()
	p.loaded = nil
}

func (p *DevicePolicy) key(dev string) PolicyKey {
	return PolicyKey{Device: dev, OSBuild: p.osBuild, AppVersion: p.appVersion, Build: p.build}
}

// load reads dev's file once (under p.mu); levels learned in this process stay when higher.
func (p *DevicePolicy) load(dev string) {
	if p.dir == "" || p.loaded[dev] {
		return
	}
	if p.loaded == nil {
		p.loaded = map[string]bool{}
	}
	p.loaded[dev] = true
	var f policyFile
	if !readCachedJSON(p.dir, p.key(dev).ID()+".json", &f) || f.Key != p.key(dev) {
		return
	}
	for prog, l := range f.Levels {
		p.raise(dev, prog, l)
	}
}

func (p *DevicePolicy) raise(dev, prog string, level int) bool {
	if p.levels == nil {
		p.levels = map[string]map[string]int{}
	}
	if p.levels[dev] == nil {
		p.levels[dev] = map[string]int{}
	}
	if level <= p.levels[dev][prog] {
		return false
	}
	p.levels[dev][prog] = level
	return true
}

// Level is the command-buffer level remembered for prog on the device named dev (0: none).
func (p *DevicePolicy) Level(dev, prog string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.load(dev)
	return p.levels[dev][prog]
}

// Remember records that prog needs at least level on the device named dev, and writes the
// device's file when persisting (a file that cannot be written is not an error: the level holds
// for this process, and the watchdog is met again in the next).
func (p *DevicePolicy) Remember(dev, prog string, level int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.load(dev)
	if !p.raise(dev, prog, level) || p.dir == "" {
		return
	}
	f := policyFile{Key: p.key(dev), When: time.Now().UTC().Truncate(time.Second), Levels: map[string]int{}}
	for k, v := range p.levels[dev] {
		f.Levels[k] = v
	}
	_ = writeCachedJSON(p.dir, f.Key.ID()+".json", "recovery policy", &f)
}

// Describe is the remembered levels of the device named dev in words (LevelWords), "" when
// nothing was remembered.
func (p *DevicePolicy) Describe(dev string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.load(dev)
	var progs []string
	for prog, l := range p.levels[dev] {
		if l > 0 {
			progs = append(progs, prog)
		}
	}
	sort.Strings(progs)
	var parts []string
	for _, prog := range progs {
		parts = append(parts, LevelWords(prog, p.levels[dev][prog]))
	}
	return strings.Join(parts, "; ")
}

// The programs that keep a level, and what their levels mean.
const (
	// ProgramDenoiser is the Metal denoiser: level 1 runs one transformer block per command
	// buffer; 2 and 3 also split each large GEMM into GemmChunks row chunks, each in its own
	// command buffer.
	ProgramDenoiser = "denoiser"
	// ProgramOps is the text encoder's, vision tower's and VAE's op backend (metalops): level 1
	// runs short command buffers.
	ProgramOps = "metalops"
)

// GemmChunks is how many row chunks the denoiser splits each large GEMM into at level (1: none).
func GemmChunks(level int) int {
	switch {
	case level >= 3:
		return 16
	case level == 2:
		return 4
	}
	return 1
}

// LevelWords is prog's level in words, for notices and diagnostics.
func LevelWords(prog string, level int) string {
	switch {
	case prog == ProgramDenoiser && level == 1:
		return "the denoiser runs one transformer block per command buffer"
	case prog == ProgramDenoiser && level >= 2:
		return fmt.Sprintf("the denoiser runs one transformer block per command buffer, each large matrix product in %d command buffers", GemmChunks(level))
	case prog == ProgramOps && level >= 1:
		return "the text encoder, vision tower and VAE run short command buffers"
	}
	return fmt.Sprintf("%s at level %d", prog, level)
}
