package published

import (
	"encoding/json"
	"testing"
)

// TestFilesAreJSON: every embedded file is there and parses.
func TestFilesAreJSON(t *testing.T) {
	files := Files()
	if len(files) != 6 {
		t.Fatalf("%d published files, want 6", len(files))
	}
	for path, data := range files {
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if File("no/such.json") != nil {
		t.Error("File of an unknown path is not nil")
	}
}
