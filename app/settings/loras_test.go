package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoRAStoreRoundTrip(t *testing.T) {
	st := &LoRAStore{Path: filepath.Join(t.TempDir(), "loras.json")}
	if ls, err := st.Load(); err != nil || ls != nil {
		t.Fatalf("missing file: %v, %v", ls, err)
	}
	want := []LoRA{{Path: "/a/turbo.safetensors", Enabled: true, Strength: 1}, {Path: "/b/style.safetensors", Strength: -0.5}}
	if err := st.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if err := st.Save([]LoRA{{Path: "x", Strength: 3}}); err == nil || !strings.Contains(err.Error(), "between -2 and 2") {
		t.Errorf("strength 3 saved: %v", err)
	}
	os.WriteFile(st.Path, []byte("{"), 0o644)
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged file: %v", err)
	}
}
