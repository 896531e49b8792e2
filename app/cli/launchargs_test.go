package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestLaunchArgsDropsFindersProcessSerialNumber(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-psn_0_4242"}, []string{}},
		{[]string{"-psn_0_4242", "version"}, []string{"version"}},
		{[]string{"inspect", "-psn_1_2", "m.cmf"}, []string{"inspect", "m.cmf"}},
		{[]string{"generate", "-p", "psn_"}, []string{"generate", "-p", "psn_"}},
		{nil, []string{}},
	} {
		if got := LaunchArgs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("LaunchArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRunIgnoresProcessSerialNumber: `easel -psn_0_4242 version` is `easel version`, not the
// unknown command "-psn_0_4242" (exit 2).
func TestRunIgnoresProcessSerialNumber(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"-psn_0_4242", "version"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "Easel ") || errb.Len() != 0 {
		t.Fatalf("stdout %q stderr %q: want the version alone", out.String(), errb.String())
	}
}
