package qwen3vl

import (
	"testing"

	"easel/internal/tinysnapshot"
)

// openHFTextEncoder is the tiny reference snapshot's text_encoder/ folder under cortiq's names.
func openHFTextEncoder(t testing.TB) *tinysnapshot.Source { return tinysnapshot.TextEncoder(t) }
