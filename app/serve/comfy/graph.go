package comfy

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"easel/app/compose"
	"easel/app/serve/render"
)

// node is one node of an API-format workflow.
type node struct {
	Class  string                     `json:"class_type"`
	Inputs map[string]json.RawMessage `json:"inputs"`
}

// understood are the node types a workflow may use, with the input each one's value comes from
// when another node links to it (primitives), or "" for nodes read by their role.
var understood = map[string]bool{
	"CheckpointLoaderSimple": true, "UNETLoader": true, "CLIPLoader": true, "VAELoader": true,
	"ModelSamplingAuraFlow": true, "CLIPTextEncode": true, "KSampler": true, "KSamplerAdvanced": true,
	"EmptyLatentImage": true, "EmptySD3LatentImage": true, "LoadImage": true, "VAEEncode": true,
	"VAEDecode": true, "SaveImage": true, "PreviewImage": true,
	"PrimitiveInt": true, "PrimitiveFloat": true, "PrimitiveString": true, "PrimitiveStringMultiline": true, "PrimitiveBoolean": true,
}

// output is one SaveImage or PreviewImage node and the generation that feeds it.
type output struct {
	id     string
	prefix string // SaveImage's filename_prefix
	temp   bool   // PreviewImage: type "temp"
	req    render.Request
	notes  []string // what was not done as the workflow asks
}

// nodeError is one node's validation error, in ComfyUI's node_errors shape.
type nodeError struct {
	id, class, kind, msg, input string
}

// graph is a workflow being read.
type graph struct {
	nodes map[string]node
	input func(name string) ([]byte, bool) // an uploaded image by name (LoadImage)
	model func(name string) bool           // whether a loader's name is one of the server's models
}

// parseGraph reads a workflow's outputs. Unknown node types are refused all at once, named.
func parseGraph(raw json.RawMessage, input func(string) ([]byte, bool), model func(string) bool) ([]output, []nodeError, string) {
	var nodes map[string]node
	if err := json.Unmarshal(raw, &nodes); err != nil || len(nodes) == 0 {
		return nil, nil, "the prompt is not an API-format workflow (an object of nodes, each {\"class_type\", \"inputs\"}): export it with \"Save (API Format)\""
	}
	var unknown []string
	var errs []nodeError
	seen := map[string]bool{}
	for id, n := range nodes {
		if !understood[n.Class] {
			errs = append(errs, nodeError{id: id, class: n.Class, kind: "invalid_prompt", msg: fmt.Sprintf("node type %s is not understood by Easel", n.Class)})
			if !seen[n.Class] {
				seen[n.Class] = true
				unknown = append(unknown, n.Class)
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, errs, fmt.Sprintf("Easel does not understand the node types %s: it runs workflows of %s", strings.Join(unknown, ", "), understoodList())
	}
	g := &graph{nodes: nodes, input: input, model: model}
	var outs []output
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := nodes[id]
		if n.Class != "SaveImage" && n.Class != "PreviewImage" {
			continue
		}
		o, ne := g.output(id, n)
		if ne != nil {
			errs = append(errs, *ne)
			continue
		}
		outs = append(outs, o)
	}
	if len(errs) > 0 {
		return nil, errs, "Prompt outputs failed validation"
	}
	if len(outs) == 0 {
		return nil, nil, "the workflow has no output: add a SaveImage node"
	}
	return outs, nil, ""
}

func understoodList() string {
	var names []string
	for n := range understood {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// link is an input that names another node's output.
func link(raw json.RawMessage) (string, bool) {
	var l []json.RawMessage
	if json.Unmarshal(raw, &l) != nil || len(l) != 2 {
		return "", false
	}
	var id string
	if json.Unmarshal(l[0], &id) != nil {
		var n json.Number
		if json.Unmarshal(l[0], &n) != nil {
			return "", false
		}
		id = n.String()
	}
	return id, true
}

// errAt makes a node error about an input.
func errAt(id string, n node, input, msg string) *nodeError {
	return &nodeError{id: id, class: n.Class, kind: "value_not_valid", msg: msg, input: input}
}

// linked follows the input name of node id to the node it names, which must be one of classes.
func (g *graph) linked(id string, n node, name string, classes ...string) (string, node, *nodeError) {
	raw, ok := n.Inputs[name]
	if !ok {
		return "", node{}, errAt(id, n, name, fmt.Sprintf("Required input is missing: %s", name))
	}
	to, ok := link(raw)
	if !ok {
		return "", node{}, errAt(id, n, name, fmt.Sprintf("input %s must link to a node's output", name))
	}
	m, ok := g.nodes[to]
	if !ok {
		return "", node{}, errAt(id, n, name, fmt.Sprintf("input %s links to node %s, which the workflow does not have", name, to))
	}
	for _, c := range classes {
		if m.Class == c {
			return to, m, nil
		}
	}
	return "", node{}, errAt(id, n, name, fmt.Sprintf("input %s links to a %s node: Easel reads it from %s", name, m.Class, strings.Join(classes, " or ")))
}

// value reads a widget input, through a link to a primitive node as ComfyUI does.
func (g *graph) value(id string, n node, name string, into any) *nodeError {
	raw, ok := n.Inputs[name]
	for hops := 0; ok && hops < 8; hops++ {
		to, isLink := link(raw)
		if !isLink {
			break
		}
		m, exists := g.nodes[to]
		if !exists || !strings.HasPrefix(m.Class, "Primitive") {
			return errAt(id, n, name, fmt.Sprintf("input %s links to node %s: Easel reads values only from primitive nodes", name, to))
		}
		raw, ok = m.Inputs["value"]
	}
	if !ok {
		return errAt(id, n, name, fmt.Sprintf("Required input is missing: %s", name))
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return errAt(id, n, name, fmt.Sprintf("input %s: %s is not the kind of value it takes", name, string(raw)))
	}
	return nil
}

// output reads the generation behind a SaveImage/PreviewImage node.
func (g *graph) output(id string, n node) (output, *nodeError) {
	o := output{id: id, temp: n.Class == "PreviewImage", prefix: "ComfyUI"}
	if !o.temp {
		if err := g.value(id, n, "filename_prefix", &o.prefix); err != nil {
			o.prefix = "ComfyUI"
		}
	}
	did, dec, ne := g.linked(id, n, "images", "VAEDecode")
	if ne != nil {
		return o, ne
	}
	sid, smp, ne := g.linked(did, dec, "samples", "KSampler", "KSamplerAdvanced")
	if ne != nil {
		return o, ne
	}
	req := &o.req
	var seed json.Number
	seedName := "seed"
	if smp.Class == "KSamplerAdvanced" {
		seedName = "noise_seed"
	}
	var steps float64
	var sampler, scheduler string
	for _, v := range []struct {
		name string
		into any
	}{{seedName, &seed}, {"steps", &steps}, {"cfg", &req.CFG}, {"sampler_name", &sampler}, {"scheduler", &scheduler}} {
		if ne := g.value(sid, smp, v.name, v.into); ne != nil {
			return o, ne
		}
	}
	sd, err := strconv.ParseUint(seed.String(), 10, 64)
	if err != nil {
		return o, errAt(sid, smp, seedName, fmt.Sprintf("%s %s: give a whole number from 0", seedName, seed))
	}
	if steps < 1 || steps > 1000 || steps != math.Trunc(steps) {
		return o, errAt(sid, smp, "steps", fmt.Sprintf("steps %g: give a whole number from 1 to 1000", steps))
	}
	if req.CFG < 0 || req.CFG > 100 {
		return o, errAt(sid, smp, "cfg", fmt.Sprintf("cfg %g: give a number from 0 to 100", req.CFG))
	}
	req.Seed, req.Steps = sd, int(steps)
	if s := strings.ToLower(sampler); s != "euler" {
		o.notes = append(o.notes, fmt.Sprintf("sampler %s is not available: Easel samples with Euler (flow matching)", sampler))
	}
	if s := strings.ToLower(scheduler); s != "simple" && s != "normal" {
		o.notes = append(o.notes, fmt.Sprintf("scheduler %s is not available: the model's own schedule was used", scheduler))
	}
	denoise := 1.0
	if smp.Class == "KSampler" {
		if _, has := smp.Inputs["denoise"]; has {
			if ne := g.value(sid, smp, "denoise", &denoise); ne != nil {
				return o, ne
			}
		}
		if denoise <= 0 || denoise > 1 {
			return o, errAt(sid, smp, "denoise", fmt.Sprintf("denoise %g: give a number above 0 and at most 1", denoise))
		}
	} else {
		var start float64
		if _, has := smp.Inputs["start_at_step"]; has {
			if ne := g.value(sid, smp, "start_at_step", &start); ne != nil {
				return o, ne
			}
		}
		if start > 0 && start < steps {
			denoise = 1 - start/steps
		}
	}
	for _, side := range []struct {
		name string
		into *string
	}{{"positive", &req.Prompt}, {"negative", &req.Negative}} {
		tid, txt, ne := g.linked(sid, smp, side.name, "CLIPTextEncode")
		if ne != nil {
			return o, ne
		}
		if ne := g.value(tid, txt, "text", side.into); ne != nil {
			return o, ne
		}
	}
	if ne := g.modelOf(sid, smp, &o); ne != nil {
		return o, ne
	}
	lid, lat, ne := g.linked(sid, smp, "latent_image", "EmptyLatentImage", "EmptySD3LatentImage", "VAEEncode")
	if ne != nil {
		return o, ne
	}
	if lat.Class == "VAEEncode" {
		iid, li, ne := g.linked(lid, lat, "pixels", "LoadImage")
		if ne != nil {
			return o, ne
		}
		var name string
		if ne := g.value(iid, li, "image", &name); ne != nil {
			return o, ne
		}
		data, ok := g.input(name)
		if !ok {
			return o, errAt(iid, li, "image", fmt.Sprintf("Invalid image file: %s: upload it first with POST /upload/image", name))
		}
		c, err := compose.NewCondition(name, data)
		if err != nil {
			return o, errAt(iid, li, "image", err.Error())
		}
		req.Start = &compose.Start{Name: c.Name, SHA256: c.SHA256, Image: c.Image, Strength: denoise}
		req.Count = 1
		return o, nil
	}
	if denoise < 1 {
		o.notes = append(o.notes, fmt.Sprintf("denoise %g has no image to start from (an empty latent): the picture was made from noise", denoise))
	}
	var w, h, batch float64
	for _, v := range []struct {
		name string
		into *float64
	}{{"width", &w}, {"height", &h}, {"batch_size", &batch}} {
		if ne := g.value(lid, lat, v.name, v.into); ne != nil {
			return o, ne
		}
	}
	if w < compose.SizeMultiple || h < compose.SizeMultiple || w > compose.MaxSide || h > compose.MaxSide {
		return o, errAt(lid, lat, "width", fmt.Sprintf("%gx%g: each side must be from %d to %d pixels", w, h, compose.SizeMultiple, compose.MaxSide))
	}
	if batch < 1 || batch > 64 {
		return o, errAt(lid, lat, "batch_size", fmt.Sprintf("batch_size %g: give 1 to 64", batch))
	}
	req.Width, req.Height, req.Count = int(w), int(h), int(batch)
	return o, nil
}

// modelOf reads the model the sampler's model input loads: a name of the server's folder
// renders with that model; any other (a template's own checkpoint) with the current model, said.
func (g *graph) modelOf(sid string, smp node, o *output) *nodeError {
	mid, m, ne := g.linked(sid, smp, "model", "CheckpointLoaderSimple", "UNETLoader", "ModelSamplingAuraFlow")
	if ne != nil {
		return ne
	}
	if m.Class == "ModelSamplingAuraFlow" {
		if mid, m, ne = g.linked(mid, m, "model", "CheckpointLoaderSimple", "UNETLoader"); ne != nil {
			return ne
		}
	}
	key := "ckpt_name"
	if m.Class == "UNETLoader" {
		key = "unet_name"
	}
	var name string
	if ne := g.value(mid, m, key, &name); ne != nil {
		return ne
	}
	if g.model(name) {
		o.req.Model = name
	} else {
		o.notes = append(o.notes, fmt.Sprintf("%s %s is not one of this server's models: the current model was used", key, name))
	}
	return nil
}
