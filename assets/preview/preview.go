// Package preview holds the fitted latent→RGBA projections the live preview uses, one JSON file
// per model (app/preview reads and regenerates them; the README says how they were made).
package preview

import "embed"

// Files are the stored projections, by file name ("qwen-image-2.1-tiny.json", …).
//
//go:embed *.json
var Files embed.FS
