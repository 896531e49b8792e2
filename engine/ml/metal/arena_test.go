package metal

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPlanChunks splits tensors of a fake file at a small largest buffer: every chunk is
// page-aligned and within the limit, every tensor lies whole inside its chunk, and a tensor
// larger than the limit declines with a sentence naming it.
func TestPlanChunks(t *testing.T) {
	var spans []span
	off := int64(3 * PageSize)
	for i := 0; i < 40; i++ {
		n := int64(1+i%7) * 5000
		spans = append(spans, span{off, n})
		off += (n + 63) / 64 * 64
	}
	// reversed order: the planner sorts by file offset itself
	for i, j := 0, len(spans)-1; i < j; i, j = i+1, j-1 {
		spans[i], spans[j] = spans[j], spans[i]
	}
	name := func(i int) string { return fmt.Sprintf("t%d", i) }
	for _, maxBuffer := range []int64{4 * PageSize, 6 * PageSize, 1 << 30} {
		chunks, where, err := planChunks(spans, maxBuffer, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if c.off%PageSize != 0 || c.len%PageSize != 0 || c.len > maxBuffer {
				t.Fatalf("max %d: chunk %+v is not whole pages within the limit", maxBuffer, c)
			}
		}
		for i, s := range spans {
			c := chunks[where[i]]
			if s.off < c.off || s.off+s.len > c.off+c.len {
				t.Fatalf("max %d: tensor %+v is not inside its chunk %+v", maxBuffer, s, c)
			}
		}
		if maxBuffer == 1<<30 && len(chunks) != 1 {
			t.Errorf("a large limit gave %d chunks, want 1", len(chunks))
		}
		if maxBuffer == 4*PageSize && len(chunks) < 5 {
			t.Errorf("a 4-page limit gave only %d chunks for %d bytes", len(chunks), off)
		}
		t.Logf("largest buffer %d bytes: %d chunks", maxBuffer, len(chunks))
	}
	_, _, err := planChunks([]span{{0, 100}, {PageSize, 2*PageSize + 1}}, 2*PageSize, name)
	var d *Declined
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "t1") || !strings.Contains(err.Error(), "largest buffer") {
		t.Fatalf("an oversized tensor: %v, want a *Declined naming t1 and the largest buffer", err)
	}
}

func TestPlanArenaNeedsTheMapping(t *testing.T) {
	mapping := make([]byte, 4*PageSize)
	inside := mapping[PageSize : PageSize+100]
	if _, err := PlanWeightArena(mapping, [][]byte{inside}, []string{"w"}, 1<<20); err != nil {
		t.Fatalf("a tensor inside the mapping: %v", err)
	}
	var d *Declined
	if _, err := PlanWeightArena(mapping, [][]byte{make([]byte, 64)}, []string{"copy"}, 1<<20); !errors.As(err, &d) || !strings.Contains(err.Error(), "copy") {
		t.Fatalf("a tensor outside the mapping: %v, want a *Declined naming it", err)
	}
	if _, err := PlanWeightArena(mapping, [][]byte{mapping[PageSize+4 : PageSize+100]}, []string{"odd"}, 1<<20); !errors.As(err, &d) {
		t.Fatalf("a tensor off a 16-byte boundary: %v, want a *Declined", err)
	}
}
