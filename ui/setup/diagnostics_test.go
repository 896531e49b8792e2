package setup

import (
	"strings"
	"testing"

	"easel/app/settings"
)

// With the backend set to the CPU the report says why Metal is not used: never "Metal:
// unavailable — " with nothing after it.
func TestDiagnosticsSayWhyMetalIsUnavailable(t *testing.T) {
	text := Diagnostics(settings.BackendCPU)
	for _, line := range strings.Split(text, "\n") {
		if why, ok := strings.CutPrefix(line, "Metal: unavailable — "); ok {
			if !strings.Contains(why, "as the backend setting asks") {
				t.Errorf("the report says %q; want the reason (the backend setting)", line)
			}
			return
		}
	}
	t.Errorf("the report has no Metal line:\n%s", text)
}
