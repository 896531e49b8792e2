package cli

import (
	"bytes"
	"strings"
	"testing"

	"easel/app"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestVersionAndHelp(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-v"}} {
		code, out, _ := run(args...)
		if code != ExitOK || strings.TrimSpace(out) != app.Name+" "+app.Version {
			t.Errorf("%v: code %d, out %q", args, code, out)
		}
	}
	code, out, _ := run("help")
	if code != ExitOK {
		t.Fatalf("help exited %d", code)
	}
	for _, name := range []string{"generate", "convert", "inspect", "verify", "bench"} {
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("help does not list %s:\n%s", name, out)
		}
	}
	code, out, _ = run("help", "convert")
	if code != ExitOK || !strings.Contains(out, "usage: easel convert") {
		t.Errorf("help convert: %d %q", code, out)
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	code, _, errOut := run("paint")
	if code != ExitUsage || !strings.Contains(errOut, `unknown command "paint"`) || !strings.Contains(errOut, "easel help") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestEveryCommandIsRegistered(t *testing.T) {
	for _, name := range []string{"generate", "convert", "inspect", "verify", "bench"} {
		c, ok := commands[name]
		if !ok || c.Run == nil || c.Summary == "" || c.Usage == "" {
			t.Errorf("command %s is not fully registered: %+v", name, c)
		}
	}
}
