package ui

import (
	"time"

	"easel/app/desktop"
	"easel/app/download"
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/preview"
	"easel/app/settings"
	"easel/app/unfinished"
)

// Deps are the app services the window works with. Run builds the real ones; tests pass fakes.
type Deps struct {
	Settings settings.Settings
	// Store persists settings changed in the window (backend, model); nil keeps them in memory.
	Store *settings.Store
	// Secrets keeps the studio's token (the OS keychain, or a file only the user reads where
	// there is none); nil: tokens are not remembered.
	Secrets *settings.Secrets
	// DraftStore keeps the prompt and the everyday settings between launches (nil: not kept).
	DraftStore *settings.DraftStore
	// LoRAStore persists the LoRA list (nil keeps it in memory); LoRAs is the list the window
	// opens with; LoRADir is the LoRA folder (where Add LoRA… starts, and where restoring an
	// image looks for its LoRAs).
	LoRAStore *settings.LoRAStore
	LoRAs     []settings.LoRA
	LoRADir   string
	// SettingsErr is a problem reading the settings, shown once in the window.
	SettingsErr error
	Generator   jobs.Generator
	// Unfinished keeps queued and running jobs across a crash, a quit or a restart (nil: not kept).
	Unfinished *unfinished.Store
	// Geometry is the model's, for the memory prediction; Budget is the device budget in bytes
	// (0: unknown, nothing is refused).
	Geometry memplan.Geometry
	Budget   int64
	// BudgetFor gives the budget of another backend choice (nil: the budget stays).
	BudgetFor func(settings.Backend) int64
	History   *history.Store
	// ScanHistory reads the output folder's past images when the window opens.
	ScanHistory bool
	// Calibrator renders step previews with the projection calibrated for the model (grey until it
	// is ready) and says so; Projection, when Calibrator is nil, is a fixed map (tests).
	Calibrator *preview.Calibrator
	Projection *preview.Projection
	// ClipboardFile returns the path of a file copied in the Finder, or ""; ClipboardImage an
	// image's bytes from the system clipboard, or nil.
	ClipboardFile  func() string
	ClipboardImage func() []byte
	// Desktop shows saved images in the Finder or file manager and copies them to the clipboard
	// (the system's when nil).
	Desktop *desktop.Opener
	// Do runs f on the UI goroutine (fyne.Do when nil). Tests collect the calls and run them on
	// the test goroutine.
	Do  func(f func())
	Now func() time.Time
	// Hub is where fast-draft LoRAs are downloaded from (the Hugging Face hub, or the mirror
	// HF_ENDPOINT names, when nil; tests serve a fake hub).
	Hub *download.Remote
}
