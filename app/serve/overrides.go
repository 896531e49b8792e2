package serve

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// readOverrides applies a request's override_settings as A1111 does for the one setting Easel
// has: sd_model_checkpoint renders this request with another model of the folder, and the next
// request with the server's own again (unless override_settings_restore_afterwards is false,
// which switches the server's model as POST /sdapi/v1/options does). Other keys are said in the
// warnings, not silently dropped.
func (s *Server) readOverrides(f *fields, p *params) {
	o := f.Object("override_settings")
	if len(o) == 0 {
		return
	}
	var others []string
	for k := range o {
		if k != "sd_model_checkpoint" {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	if len(others) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("override_settings %s are not applied in Easel; they were ignored", strings.Join(others, ", ")))
	}
	raw, ok := o["sd_model_checkpoint"]
	if !ok || string(raw) == "null" {
		return
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		f.errs = append(f.errs, detailItem{Loc: []any{"body", "override_settings", "sd_model_checkpoint"}, Msg: "str type expected", Type: "type_error.str"})
		return
	}
	if !f.Bool("override_settings_restore_afterwards", true) {
		if err := s.models.choose(name); err != nil {
			f.errs = append(f.errs, detailItem{Loc: []any{"body", "override_settings", "sd_model_checkpoint"}, Msg: noPaths(err.Error()), Type: "value_error"})
		}
		return
	}
	path, err := s.models.find(name)
	switch {
	case err != nil:
		f.errs = append(f.errs, detailItem{Loc: []any{"body", "override_settings", "sd_model_checkpoint"}, Msg: noPaths(err.Error()), Type: "value_error"})
	case path == s.models.currentPath():
	case s.cfg.UseModel == nil:
		p.Warnings = append(p.Warnings, fmt.Sprintf("override_settings.sd_model_checkpoint %q: this server cannot render one request with another model; the current model was used (POST /sdapi/v1/options switches it)", name))
	default:
		p.Model = path
	}
}

// emphasisRE finds A1111's attention syntax: (text:1.2), ((text)), [text].
var emphasisRE = regexp.MustCompile(`\([^()]*:\s*-?[0-9]*\.?[0-9]+\s*\)|\(\(|\)\)|\[[^\[\]]+\]`)

// emphasisWarning says when a prompt uses A1111's emphasis syntax: Easel's text encoder reads the
// prompt as written (brackets and numbers included), it applies no weights.
func emphasisWarning(prompt, negative string) string {
	for _, t := range []string{prompt, negative} {
		if m := emphasisRE.FindString(t); m != "" {
			return fmt.Sprintf("A1111 emphasis like %q was read as plain text: Easel applies no attention weights (the model reads the prompt as written); write the words without the brackets and weights", m)
		}
	}
	return ""
}
