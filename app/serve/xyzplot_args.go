package serve

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// xyzScriptName is A1111's X/Y/Z plot script as script_name names it (compared without case).
const xyzScriptName = "x/y/z plot"

// xyzOption is one of A1111's axis types (scripts/xyz_grid.py, axis_options, in order): its label,
// whether it shows in txt2img only (t), img2img only (i) or both (""), and the Easel axis it is
// ("" where Easel has none). A request's type index counts only the options of its mode, as
// A1111's current_axis_options does.
type xyzOption struct {
	label, mode, easel string
	isFloat            bool
}

var xyzOptions = []xyzOption{
	{"Nothing", "", "", false},
	{"Seed", "", "seed", false},
	{"Var. seed", "", "", false},
	{"Var. strength", "", "variation-strength", true},
	{"Steps", "", "steps", false},
	{"Hires steps", "t", "", false},
	{"CFG Scale", "", "cfg", true},
	{"Image CFG Scale", "i", "", true},
	{"Prompt S/R", "", "prompt-sr", false},
	{"Prompt order", "", "", false},
	{"Sampler", "t", "", false},
	{"Hires sampler", "t", "", false},
	{"Sampler", "i", "", false},
	{"Checkpoint name", "", "", false},
	{"Negative Guidance minimum sigma", "", "", true},
	{"Sigma Churn", "", "", true},
	{"Sigma min", "", "", true},
	{"Sigma max", "", "", true},
	{"Sigma noise", "", "", true},
	{"Schedule type", "", "", false},
	{"Schedule min sigma", "", "", true},
	{"Schedule max sigma", "", "", true},
	{"Schedule rho", "", "", true},
	{"Eta", "", "", true},
	{"Clip skip", "", "", false},
	{"Denoising", "", "strength", true},
	{"Initial noise multiplier", "", "", true},
	{"Extra noise", "", "", true},
	{"Hires upscaler", "t", "", false},
	{"Cond. Image Mask Weight", "i", "", true},
	{"VAE", "", "", false},
	{"Styles", "", "", false},
	{"UniPC Order", "", "", false},
	{"Face restore", "", "", false},
	{"Token merging ratio", "", "", true},
	{"Token merging ratio high-res", "", "", true},
	{"Always discard next-to-last sigma", "", "", false},
	{"SGM noise multiplier", "", "", false},
	{"Refiner checkpoint", "", "", false},
	{"Refiner switch at", "", "", true},
	{"RNG source", "", "", false},
}

// xyzModeOptions are the options a mode's type indices count ("txt2img" or "img2img").
func xyzModeOptions(kind string) []xyzOption {
	skip := "i"
	if kind == "img2img" {
		skip = "t"
	}
	var out []xyzOption
	for _, o := range xyzOptions {
		if o.mode != skip {
			out = append(out, o)
		}
	}
	return out
}

// xyzArgs are script_args as A1111's Script.run reads them: x_type, x_values, x_values_dropdown,
// y_type, y_values, y_values_dropdown, z_type, z_values, z_values_dropdown, draw_legend,
// include_lone_images, include_sub_grids, no_fixed_seeds, margin_size, csv_mode, raw_mode.
type xyzArgs struct {
	types            [3]int
	values           [3]string
	dropdowns        [3][]string
	includeLone      bool
	includeSubGrids  bool
	noFixedSeeds     bool
	csvMode, rawMode bool
}

// parseXYZArgs reads script_args; a wrong shape is an error naming the argument.
func parseXYZArgs(raw json.RawMessage) (*xyzArgs, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("script_args must be a list, as A1111's X/Y/Z plot takes it")
	}
	names := []string{"x_type", "x_values", "x_values_dropdown", "y_type", "y_values", "y_values_dropdown", "z_type", "z_values", "z_values_dropdown",
		"draw_legend", "include_lone_images", "include_sub_grids", "no_fixed_seeds", "margin_size", "csv_mode", "raw_mode"}
	if len(items) < 3 {
		return nil, fmt.Errorf("script_args has %d items; the X/Y/Z plot takes %d: %s", len(items), len(names), strings.Join(names, ", "))
	}
	a := &xyzArgs{}
	for i, it := range items {
		if i >= len(names) || string(bytes.TrimSpace(it)) == "null" {
			continue
		}
		axis := i / 3
		var err error
		switch {
		case i < 9 && i%3 == 0:
			var n json.Number
			if err = json.Unmarshal(it, &n); err == nil {
				var v int64
				if v, err = n.Int64(); err == nil {
					a.types[axis] = int(v)
				}
			}
		case i < 9 && i%3 == 1:
			var s string
			if err = json.Unmarshal(it, &s); err != nil {
				var n json.Number // a lone number is accepted as its text
				if json.Unmarshal(it, &n) == nil {
					s, err = n.String(), nil
				}
			}
			a.values[axis] = s
		case i < 9:
			err = json.Unmarshal(it, &a.dropdowns[axis])
		case i == 13:
			var n float64
			err = json.Unmarshal(it, &n)
		default:
			var b bool
			if err = json.Unmarshal(it, &b); err == nil {
				switch i {
				case 10:
					a.includeLone = b
				case 11:
					a.includeSubGrids = b
				case 12:
					a.noFixedSeeds = b
				case 14:
					a.csvMode = b
				case 15:
					a.rawMode = b
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("script_args item %d (%s) is not what the X/Y/Z plot takes there", i, names[i])
		}
	}
	return a, nil
}

// A1111's ranges: "1-5", "1-10 (+3)" (a step), "1-10 [4]" (a count, spaced evenly).
var (
	reRange      = regexp.MustCompile(`^\s*([+-]?\s*\d+)\s*-\s*([+-]?\s*\d+)(?:\s*\(([+-]\d+)\s*\))?\s*$`)
	reRangeFloat = regexp.MustCompile(`^\s*([+-]?\s*\d+(?:.\d*)?)\s*-\s*([+-]?\s*\d+(?:.\d*)?)(?:\s*\(([+-]\d+(?:.\d*)?)\s*\))?\s*$`)
	reCount      = regexp.MustCompile(`^\s*([+-]?\s*\d+)\s*-\s*([+-]?\s*\d+)(?:\s*\[(\d+)\s*])?\s*$`)
	reCountFloat = regexp.MustCompile(`^\s*([+-]?\s*\d+(?:.\d*)?)\s*-\s*([+-]?\s*\d+(?:.\d*)?)(?:\s*\[(\d+(?:.\d*)?)\s*])?\s*$`)
)

func num(s string) float64 {
	v, _ := strconv.ParseFloat(strings.ReplaceAll(s, " ", ""), 64)
	return v
}

// xyzValues expands one axis's values as A1111 does (its CSV list, then the ranges of a number
// axis), each value as text.
func xyzValues(o xyzOption, values string, dropdown []string, a *xyzArgs) ([]string, error) {
	var list []string
	switch {
	case len(dropdown) > 0 && !a.csvMode && strings.TrimSpace(values) == "":
		list = dropdown
	case a.rawMode && strings.Contains(strings.TrimSpace(values), "\n"):
		list = strings.Split(strings.TrimSpace(values), "\n")
	default:
		r := csv.NewReader(strings.NewReader(values))
		r.FieldsPerRecord, r.LazyQuotes = -1, true
		for {
			rec, err := r.Read()
			if err != nil {
				break
			}
			for _, v := range rec {
				list = append(list, strings.TrimSpace(v))
			}
		}
	}
	if o.easel == "prompt-sr" {
		return list, nil
	}
	var out []string
	const maxValues = 1000
	for _, v := range list {
		if !o.isFloat {
			if m := reRange.FindStringSubmatch(v); m != nil {
				start, end, step := int(num(m[1])), int(num(m[2]))+1, 1
				if m[3] != "" {
					step = int(num(m[3]))
				}
				for x := start; step != 0 && ((step > 0 && x < end) || (step < 0 && x > end)) && len(out) < maxValues; x += step {
					out = append(out, strconv.Itoa(x))
				}
				continue
			}
			if m := reCount.FindStringSubmatch(v); m != nil {
				for _, x := range linspace(num(m[1]), num(m[2]), m[3]) {
					out = append(out, strconv.Itoa(int(x)))
				}
				continue
			}
		} else {
			if m := reRangeFloat.FindStringSubmatch(v); m != nil {
				start, end, step := num(m[1]), num(m[2]), 1.0
				if m[3] != "" {
					step = num(m[3])
				}
				// np.arange(start, end + step, step)
				for i := 0; step != 0 && len(out) < maxValues; i++ {
					x := start + float64(i)*step
					if (step > 0 && x >= end+step) || (step < 0 && x <= end+step) {
						break
					}
					out = append(out, strconv.FormatFloat(round8(x), 'g', -1, 64))
				}
				continue
			}
			if m := reCountFloat.FindStringSubmatch(v); m != nil {
				for _, x := range linspace(num(m[1]), num(m[2]), m[3]) {
					out = append(out, strconv.FormatFloat(round8(x), 'g', -1, 64))
				}
				continue
			}
		}
		if o.easel == "seed" && (v == "" || v == "-1") && !a.noFixedSeeds {
			v = strconv.FormatUint(uint64(randomSeed()), 10) // A1111's fix_axis_seeds
		}
		out = append(out, v)
	}
	return out, nil
}

// linspace is np.linspace(start, stop, num) (num 1 when not given).
func linspace(start, stop float64, count string) []float64 {
	n := 1
	if count != "" {
		n = int(num(count))
	}
	n = min(max(n, 0), 1000)
	out := make([]float64, n)
	for i := range n {
		if n == 1 {
			out[i] = start
			continue
		}
		out[i] = start + (stop-start)*float64(i)/float64(n-1)
	}
	return out
}

func round8(x float64) float64 { return math.Round(x*1e8) / 1e8 }

// csvJoin writes values as one CSV line (quoting those with commas), as the grid's axis values.
func csvJoin(values []string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(values)
	w.Flush()
	return strings.TrimSpace(b.String())
}
