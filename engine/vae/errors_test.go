package vae

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// withoutTensor hides one name of a source.
type withoutTensor struct {
	quant.Source
	hidden string
}

func (s withoutTensor) Tensor(name string) (*quant.Tensor, error) {
	if name == s.hidden {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	return s.Source.Tensor(name)
}

func TestLoadNamesAMissingWeight(t *testing.T) {
	src := openSnapshotVAE(t)
	for _, name := range []string{
		ConfigTensor,
		"vae.decoder.up_blocks.3.upsampler.resample.1.weight",
		"vae.encoder.mid_block.attentions.0.norm.gamma",
		"vae.quant_conv.bias",
	} {
		_, err := Load(cpu.New(), withoutTensor{src, name})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: error %v does not name it", name, err)
		}
	}
}

func TestDecodeAndEncodeStopWhenCancelled(t *testing.T) {
	m, _ := loadTiny(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	zn := randomLatents(m.Config().ZDim, 2, 2, 1)
	if _, err := m.Decode(ctx, zn); !errors.Is(err, context.Canceled) {
		t.Errorf("Decode with a cancelled context: %v", err)
	}
	if _, err := m.DecodeTiled(ctx, zn, Tiling{Tile: 1, Overlap: 0}); !errors.Is(err, context.Canceled) {
		t.Errorf("DecodeTiled with a cancelled context: %v", err)
	}
	img := &Image{C: 4, H: 16, W: 16, Pix: make([]float32, 4*16*16)}
	if _, _, err := m.Encode(ctx, img); !errors.Is(err, context.Canceled) {
		t.Errorf("Encode with a cancelled context: %v", err)
	}
}

func TestWrongShapesAreRefused(t *testing.T) {
	m, _ := loadTiny(t)
	ctx := context.Background()
	if _, err := m.Decode(ctx, randomLatents(16, 2, 2, 1)); err == nil {
		t.Error("16-channel latents were decoded")
	}
	if _, _, err := m.Encode(ctx, &Image{C: 4, H: 24, W: 16, Pix: make([]float32, 4*24*16)}); err == nil {
		t.Error("a 24-pixel-high image (not a multiple of 16) was encoded")
	}
	if _, err := FromTokens(make([]float32, 64*5), 2, 3); err == nil {
		t.Error("5 tokens were unpacked as a 2×3 grid")
	}
}

func TestTokensRoundTrip(t *testing.T) {
	l := randomLatents(64, 3, 5, 9)
	tok := l.Tokens()
	// token y·w + x holds the channels of pixel (y, x) contiguously
	if tok[(1*5+2)*64+7] != l.Data[(7*3+1)*5+2] {
		t.Fatal("token (1, 2) channel 7 is not latent [7, 1, 2]")
	}
	back, err := FromTokens(tok, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if back.C != 64 || fmt.Sprint(back.Data) != fmt.Sprint(l.Data) {
		t.Error("FromTokens(Tokens()) is not the identity")
	}
}
