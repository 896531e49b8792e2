package qi21

import (
	"reflect"
	"testing"
)

// TestPublishedConfigIsTheReleasedGeometry: the embedded published config parses to the released
// transformer's geometry (spec §6.1).
func TestPublishedConfigIsTheReleasedGeometry(t *testing.T) {
	causal := true
	want := Config{Heads: 32, HeadDim: 128, Layers: 32, InChannels: 64, OutChannels: 64, ContextDim: 4096,
		MLPRatio: 3, AxesDims: []int{16, 56, 56}, Eps: 1e-6, CausalCondition: &causal, PatchSize: 1}
	if got := PublishedConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("published config %+v, want %+v", got, want)
	}
}
