package tokenizer

import (
	"strings"
	"testing"
)

// miniFile is a complete byte-level BPE tokenizer.json over the 256 bytes plus the given merges
// and added tokens; the pre-tokenizer is overridden by preTok when not empty.
func miniFile(merges, added, preTok string) string {
	var vocab []string
	for b := 0; b < 256; b++ {
		vocab = append(vocab, `"`+jsonEscape(string(byteRunes[b]))+`": `+itoa(b))
	}
	vocab = append(vocab, `"ab": 256`, `"abc": 257`)
	if preTok == "" {
		preTok = `{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}`
	}
	return `{"added_tokens": [` + added + `], "normalizer": {"type": "NFC"}, "pre_tokenizer": ` + preTok +
		`, "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {` + strings.Join(vocab, ", ") +
		`}, "merges": [` + merges + `]}}`
}

func jsonEscape(s string) string {
	switch s {
	case `"`:
		return `\"`
	case `\`:
		return `\\`
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

// TestLoadVariants: both merge spellings load and merge the same way, the ByteLevel built-in
// split works, and features this package does not implement are refused with a reason.
func TestLoadVariants(t *testing.T) {
	tests := []struct {
		name, file string
		text       string
		want       []int
		wantErr    string
	}{
		{name: "pair merges", file: miniFile(`["a", "b"], ["ab", "c"]`, ``, ``), text: "abc ab", want: []int{257, 32, 256}},
		{name: "string merges", file: miniFile(`"a b", "ab c"`, ``, ``), text: "abc ab", want: []int{257, 32, 256}},
		{name: "a pair not in merges stays apart even when the vocab holds it", file: miniFile(`["a", "b"]`, ``, ``), text: "abc", want: []int{256, 99}},
		{name: "added token", file: miniFile(`["a", "b"]`, `{"id": 300, "content": "<x>", "special": true}`, ``), text: "ab<x>a", want: []int{256, 300, 97}},
		{name: "bad merge", file: miniFile(`["a", "q"]`, ``, ``), wantErr: "missing from the vocab"},
		{name: "lstrip", file: miniFile(``, `{"id": 300, "content": "<x>", "lstrip": true}`, ``), wantErr: "lstrip"},
		{name: "negative added id", file: miniFile(``, `{"id": -1, "content": "<x>"}`, ``), wantErr: "out of range"},
		{name: "metaspace", file: miniFile(``, ``, `{"type": "Metaspace"}`), wantErr: "Metaspace"},
		{name: "bad pattern", file: miniFile(``, ``, `{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}, {"type": "ByteLevel", "use_regex": false}]}`), wantErr: "does not compile"},
		{name: "not json", file: `{"model": `, wantErr: "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := Load([]byte(tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := tok.Encode(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
				}
			}
		})
	}
}

func TestDecodeRejectsUnknownIDs(t *testing.T) {
	tok := qwenTokenizer(t)
	for _, id := range []int{-1, tok.Size(), 151669 + 100} {
		if _, err := tok.Decode([]int{id}); err == nil {
			t.Errorf("Decode([%d]): no error", id)
		}
	}
}
