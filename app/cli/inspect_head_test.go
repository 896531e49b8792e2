package cli

import (
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinymodel"
	"easel/internal/tinysnapshot"
)

// inspect says whether a file can write text: its own head and codec, a tied head, or what an
// old file lacks and how to get it.
func TestInspectShowsTheLanguageHead(t *testing.T) {
	untied := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	for _, c := range []struct{ path, want string }{
		{untied, "language head te.norm.weight + te.lm_head.weight q8_2f"},
		{tinymodel.Path(t, convert.Options{Profile: convert.ProfileCortiq}), "language head te.norm.weight + the token embedding (tied)"},
		{tinymodel.WithoutHead(t, convert.Options{Profile: convert.ProfileCortiq}), "language head absent: this model file was converted before Easel could write text"},
	} {
		code, out, errOut := run("inspect", c.path)
		if code != ExitOK || !strings.Contains(out, c.want) {
			t.Errorf("inspect %s: exit %d (%s), want a line with %q:\n%s", c.path, code, errOut, c.want, out)
		}
	}
}
