package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"easel/engine/qwen3vl"
	"easel/engine/vae"
	"easel/internal/golden"
)

// parityBound is the end-to-end absolute tolerance on latents and on the [0, 1] image: the
// reference's float32 pipeline against ours, same weights (REFERENCE.md: under 1e-4 end to end).
const parityBound = 1e-4

// TestGoldenPipelineStages runs every pipeline_* case from the reference's own processor outputs
// (te ids, pixel_values, the VAE inputs) and its recorded noise through our text encoder, VAE
// encoder, prefill, Euler loop with CFG and decoder, and compares the latents after every step and
// the final image. It also checks that our noise for the case's seed is the recorded noise, bit
// for bit, and that our size rules give the case's output size.
func TestGoldenPipelineStages(t *testing.T) {
	p := newTinyPipeline(t, nil)
	for _, c := range pipelineCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			h, w := c.Target()
			noise := c.RecordedNoise(t)
			fromSeed, err := p.Noise(c.Seed, h, w)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fromSeed, noise) {
				t.Errorf("seed %d: our noise differs from the reference's (max |Δ| %.3g)", c.Seed, golden.MaxAbsErr(fromSeed, noise))
			}

			var vision []qwen3vl.VisionInput
			var vaeIn []*vae.Image
			if c.Has("te0_pixel_values") {
				vision = c.SplitVision(t, "te0")
				for k := range len(c.Shapes) - 1 {
					px, shape := c.Floats(t, fmt.Sprintf("vae_encode_input_%d", k))
					vaeIn = append(vaeIn, &vae.Image{C: shape[1], H: shape[3], W: shape[4], Pix: px})
				}
			}
			pos := encodeCase(t, p, c, "te0", c.Prompt, vision)
			var neg *Conditioning
			if c.CFG > 1 {
				neg = encodeCase(t, p, c, "te1", c.Negative, c.SplitVisionIf(t, "te1"))
			}
			want, _ := c.Floats(t, "dit0_encoder_hidden_states")
			if e := golden.RelErr(pos.Embeddings, want); !(e <= 1e-5) {
				t.Errorf("prompt embeddings: relative error %.3g", e)
			}
			condLatents, condShapes, err := p.EncodeConditionImages(t.Context(), vaeIn)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(condShapes, c.Shapes[:len(c.Shapes)-1]) {
				t.Fatalf("condition latent grids %v, the reference's img_shapes %v", condShapes, c.Shapes)
			}
			schedule, err := p.Schedule(c.Steps, nil, h*w)
			if err != nil {
				t.Fatal(err)
			}
			stepsWant, sshape := c.Floats(t, "steps_latents")
			per := sshape[2] * sshape[3]
			var worst float64
			latents, err := p.Denoise(t.Context(), DenoiseInput{Positive: pos, Negative: neg, CFG: c.CFG,
				CondLatents: condLatents, CondShapes: condShapes, H: h, W: w, Noise: noise, Schedule: schedule},
				DenoiseHooks{Step: func(s StepReport) {
					e := maxAbs(t, "latents", s.Latents, stepsWant[s.Index*per:(s.Index+1)*per])
					worst = max(worst, e)
					if !(e <= parityBound) {
						t.Errorf("latents after step %d (σ %.4f): max |Δ| %.3g > %g", s.Index+1, s.Sigma, e, parityBound)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := p.Decode(t.Context(), latents, h, w)
			if err != nil {
				t.Fatal(err)
			}
			imgWant, _ := c.Floats(t, "image_np")
			ie := maxAbs(t, "image_np", imageHWC(decoded), imgWant)
			if !(ie <= parityBound) {
				t.Errorf("image: max |Δ| %.3g > %g", ie, parityBound)
			}
			t.Logf("%d steps, CFG %g: latents max |Δ| %.3g over the steps, image max |Δ| %.3g", c.Steps, c.CFG, worst, ie)

			req := Request{Width: c.Width, Height: c.Height, Resolution: c.Resolution, Images: c.CondImages(t)}
			W, H, err := p.OutputSize(&req)
			if err != nil {
				t.Fatal(err)
			}
			if W != 16*w || H != 16*h {
				t.Errorf("output size %d×%d, the reference made %d×%d", W, H, 16*w, 16*h)
			}
		})
	}
}

// encodeCase encodes one of the case's recorded prompts (te0 or te1): its input_ids without the
// left padding, and the system-prefix length our prompt builder computes for the same text.
func encodeCase(t *testing.T, p *Pipeline, c *pipelineCase, prefix, text string, vision []qwen3vl.VisionInput) *Conditioning {
	t.Helper()
	ids := c.Ints(t, prefix+"_input_ids")
	mask := c.Ints(t, prefix+"_attention_mask")
	var kept []int32
	for i, id := range ids {
		if mask[i] != 0 {
			kept = append(kept, id)
		}
	}
	built, err := p.BuildPrompt(text, c.ConditionsFor(t, prefix))
	if err != nil {
		t.Fatal(err)
	}
	cond, err := p.EncodePrompt(t.Context(), kept, built.Drop, vision)
	if err != nil {
		t.Fatal(err)
	}
	return cond
}
