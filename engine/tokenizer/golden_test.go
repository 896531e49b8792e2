package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"easel/internal/golden"
)

// tokenizerCases is the layout of tokenizer_cases.json.
type tokenizerCases struct {
	Tokenizer string `json:"tokenizer"` // path of the tokenizer.json inside the model snapshot
	Cases     []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	} `json:"cases"`
}

var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)

// qwenTokenizer loads the real Qwen tokenizer.json of the golden model snapshot once per run.
func qwenTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	qwenOnce.Do(func() {
		snap, err := golden.ModelSnapshot()
		if err != nil {
			qwenErr = err
			return
		}
		qwenTok, qwenErr = LoadFile(filepath.Join(snap, "processor", "tokenizer.json"))
	})
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenTok
}

func loadTokenizerCases(t *testing.T) tokenizerCases {
	t.Helper()
	path, err := golden.Path("tokenizer_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases tokenizerCases
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases.Cases) == 0 {
		t.Fatalf("%s holds no cases", path)
	}
	return cases
}

// TestGoldenTokenizer: every string of tokenizer_cases.json encodes to exactly the reference ids
// (tokenizer(text, add_special_tokens=False)), and those ids decode back to the string.
func TestGoldenTokenizer(t *testing.T) {
	cases := loadTokenizerCases(t)
	tok := qwenTokenizer(t)
	if cases.Tokenizer != "processor/tokenizer.json" {
		snap, err := golden.ModelSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		if tok, err = LoadFile(filepath.Join(snap, filepath.FromSlash(cases.Tokenizer))); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cases.Cases {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			got := tok.Encode(c.Text)
			if fmt.Sprint(got) != fmt.Sprint(c.IDs) {
				t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
			}
			text, err := tok.Decode(c.IDs)
			if err != nil {
				t.Fatal(err)
			}
			if want := normalizeOutsideAdded(tok, c.Text); text != want {
				t.Errorf("Decode(reference ids) = %q, want %q", text, want)
			}
		})
	}
}

// TestEncodeConcurrently: one Tokenizer serves several goroutines at once (run with -race).
func TestEncodeConcurrently(t *testing.T) {
	tok := qwenTokenizer(t)
	cases := loadTokenizerCases(t).Cases
	errs := make(chan string, len(cases)*4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cases {
				if got := tok.Encode(c.Text); fmt.Sprint(got) != fmt.Sprint(c.IDs) {
					errs <- fmt.Sprintf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
