package metal

import (
	"strings"
	"testing"
)

func TestKnobsFromEnvironment(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	k, err := knobsFrom(env(nil))
	if err != nil || k.Guards != DefaultGuards || k.Profile || k.Amax {
		t.Fatalf("empty environment: %+v, %v; want the default guards, profiling and amax off", k, err)
	}
	k, err = knobsFrom(env(map[string]string{"EASEL_METAL_PROF": "1", "EASEL_METAL_AMAX": "1",
		"EASEL_METAL_ATTN_SHIFT": "0", "EASEL_METAL_QKV_SHIFT": "5", "EASEL_METAL_AO_SHIFT": "6", "EASEL_METAL_FFN_SHIFT": "3", "EASEL_METAL_HID_SHIFT": "14"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Guards{Attn: 0, QKV: 5, AO: 6, FFN: 3, Hid: 14}); k.Guards != want || !k.Profile || !k.Amax {
		t.Fatalf("overrides: %+v, want guards %+v with profiling and amax on", k, want)
	}
	for _, bad := range []map[string]string{
		{"EASEL_METAL_HID_SHIFT": "15"},
		{"EASEL_METAL_QKV_SHIFT": "-1"},
		{"EASEL_METAL_AO_SHIFT": "four"},
		{"EASEL_METAL_PROF": "yes"},
	} {
		_, err := knobsFrom(env(bad))
		for name := range bad {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: error %v, want one naming %s", bad, err, name)
			}
		}
	}
}
