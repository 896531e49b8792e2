package qi21

import (
	"fmt"
	"reflect"
	"strconv"

	"easel/engine/ml"
	"easel/engine/quant"
)

// Weights are the transformer's top-level tensors, bound by their diffusers names under "dit.".
// Large matrices stay in their codec (read in place); the small vectors are uploaded as float32.
type Weights struct {
	ImgIn      *quant.Tensor `dit:"img_in.weight"`
	TextNorm   ml.Tensor     `dit:"txt_in.text_norm.weight"`
	TxtIn      *quant.Tensor `dit:"txt_in.in_layer.weight"`
	TxtOut     *quant.Tensor `dit:"txt_in.out_layer.weight"`
	TimeIn     *quant.Tensor `dit:"time_text_embed.timestep_embedder.linear_1.weight"`
	TimeOut    *quant.Tensor `dit:"time_text_embed.timestep_embedder.linear_2.weight"`
	Modulation *quant.Tensor `dit:"modulation.1.weight"`
	NormOut    *quant.Tensor `dit:"norm_out.linear.weight"`
	ProjOut    *quant.Tensor `dit:"proj_out.weight"`
}

// Block is one transformer block's tensors, under "dit.transformer_blocks.{i}.".
type Block struct {
	ToQ   *quant.Tensor `dit:"attn.to_q.weight"`
	ToK   *quant.Tensor `dit:"attn.to_k.weight"`
	ToV   *quant.Tensor `dit:"attn.to_v.weight"`
	ToOut *quant.Tensor `dit:"attn.to_out.0.weight"`
	NormQ ml.Tensor     `dit:"attn.norm_q.weight"`
	NormK ml.Tensor     `dit:"attn.norm_k.weight"`
	Gate  *quant.Tensor `dit:"img_mlp.gate_layer.weight"`
	Up    *quant.Tensor `dit:"img_mlp.proj.weight"`
	Down  *quant.Tensor `dit:"img_mlp.out.weight"`
}

// expectedShapes is every tensor's shape under the config (spec §6.2), by name without "dit.".
func expectedShapes(c Config) map[string][]int {
	D, F := c.Hidden(), c.MLPHidden()
	s := map[string][]int{
		"img_in.weight":                                     {D, c.InChannels},
		"txt_in.text_norm.weight":                           {c.ContextDim},
		"txt_in.in_layer.weight":                            {D, c.ContextDim},
		"txt_in.out_layer.weight":                           {D, D},
		"time_text_embed.timestep_embedder.linear_1.weight": {D, timestepChannels},
		"time_text_embed.timestep_embedder.linear_2.weight": {D, D},
		"modulation.1.weight":                               {4 * D, D},
		"norm_out.linear.weight":                            {D, D},
		"proj_out.weight":                                   {c.OutChannels, D},
	}
	for l := 0; l < c.Layers; l++ {
		p := "transformer_blocks." + strconv.Itoa(l) + "."
		for _, n := range []string{"attn.to_q.weight", "attn.to_k.weight", "attn.to_v.weight", "attn.to_out.0.weight"} {
			s[p+n] = []int{D, D}
		}
		s[p+"attn.norm_q.weight"] = []int{c.HeadDim}
		s[p+"attn.norm_k.weight"] = []int{c.HeadDim}
		s[p+"img_mlp.gate_layer.weight"] = []int{F, D}
		s[p+"img_mlp.proj.weight"] = []int{F, D}
		s[p+"img_mlp.out.weight"] = []int{D, F}
	}
	return s
}

var (
	quantType    = reflect.TypeOf((*quant.Tensor)(nil))
	mlTensorType = reflect.TypeOf((*ml.Tensor)(nil)).Elem()
)

// bind fills the fields of the struct dst points to from src: each field's `dit` tag is its
// tensor name after "dit." + prefix. *quant.Tensor fields keep the payload in place; ml.Tensor
// fields are decoded to float32 and uploaded to the backend.
func bind(dst any, src quant.Source, be ml.Backend, prefix string, shapes map[string][]int) error {
	v := reflect.ValueOf(dst).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		tag := f.Tag.Get("dit")
		if tag == "" {
			continue
		}
		name := prefix + tag
		t, err := src.Tensor("dit." + name)
		if err != nil {
			return fmt.Errorf("qi21: loading dit.%s: %v", name, err)
		}
		if t == nil {
			return fmt.Errorf("qi21: the model has no tensor dit.%s: it is not a complete Qwen-Image-2.1 transformer", name)
		}
		if want := shapes[name]; !sameShape(t.Shape, want) {
			return fmt.Errorf("qi21: dit.%s has shape %v but the transformer config calls for %v: the weights and config.json do not belong together", name, t.Shape, want)
		}
		switch f.Type {
		case quantType:
			v.Field(i).Set(reflect.ValueOf(t))
		case mlTensorType:
			vals, err := quant.Dequantize(t)
			if err != nil {
				return fmt.Errorf("qi21: decoding dit.%s: %v", name, err)
			}
			up, err := be.Upload(vals, len(vals))
			if err != nil {
				return fmt.Errorf("qi21: uploading dit.%s: %v", name, err)
			}
			v.Field(i).Set(reflect.ValueOf(&up).Elem())
		default:
			return fmt.Errorf("qi21: field %s has type %v, which bind cannot fill", f.Name, f.Type)
		}
	}
	return nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
