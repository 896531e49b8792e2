package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
)

// fileJSON is the part of a Hugging Face tokenizer.json this package reads.
type fileJSON struct {
	AddedTokens []addedTokenJSON `json:"added_tokens"`
	Normalizer  *componentJSON   `json:"normalizer"`
	PreTok      *componentJSON   `json:"pre_tokenizer"`
	Decoder     *componentJSON   `json:"decoder"`
	Model       modelJSON        `json:"model"`
}

type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// componentJSON is a normalizer, pre-tokenizer or decoder; Sequence types nest.
type componentJSON struct {
	Type           string          `json:"type"`
	Normalizers    []componentJSON `json:"normalizers"`
	Pretokenizers  []componentJSON `json:"pretokenizers"`
	Pattern        *patternJSON    `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
}

type patternJSON struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type modelJSON struct {
	Type                    string     `json:"type"`
	Dropout                 *float64   `json:"dropout"`
	UnkToken                *string    `json:"unk_token"`
	ContinuingSubwordPrefix *string    `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string    `json:"end_of_word_suffix"`
	ByteFallback            bool       `json:"byte_fallback"`
	IgnoreMerges            bool       `json:"ignore_merges"`
	Vocab                   vocabJSON  `json:"vocab"`
	Merges                  mergesJSON `json:"merges"`
}

// LoadFile reads a tokenizer.json from disk (see Load).
func LoadFile(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %v", err)
	}
	t, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// Load builds a tokenizer from the bytes of a Hugging Face tokenizer.json with a byte-level BPE
// model (the Qwen2/Qwen3 family). It refuses, with the reason, files that use a feature it does
// not implement rather than tokenizing them differently.
func Load(tokenizerJSON []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json is not valid JSON of the expected layout: %v", err)
	}
	t := &Tokenizer{}
	var err error
	if t.nfc, err = readNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.split, err = readPreTokenizer(f.PreTok); err != nil {
		return nil, err
	}
	if err := checkDecoder(f.Decoder); err != nil {
		return nil, err
	}
	if t.bpe, err = newBPE(f.Model); err != nil {
		return nil, err
	}
	if t.added, err = newAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	t.buildDecodeTable(f.AddedTokens)
	return t, nil
}

// readNormalizer accepts no normalizer or NFC (alone or as the only member of a Sequence).
func readNormalizer(n *componentJSON) (nfc bool, err error) {
	switch {
	case n == nil:
		return false, nil
	case n.Type == "NFC":
		return true, nil
	case n.Type == "Sequence" && len(n.Normalizers) == 0:
		return false, nil
	case n.Type == "Sequence" && len(n.Normalizers) == 1:
		return readNormalizer(&n.Normalizers[0])
	}
	return false, fmt.Errorf("tokenizer.json has normalizer %q: only NFC (or none) is implemented", n.Type)
}

// gpt2Pattern is the split the ByteLevel pre-tokenizer applies itself when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// readPreTokenizer accepts what byte-level BPE files use: Sequence[Split(Regex, Isolated),
// ByteLevel(use_regex=false)], or a lone ByteLevel whose built-in GPT-2 split is on.
func readPreTokenizer(p *componentJSON) (splitter, error) {
	if p == nil {
		return nil, fmt.Errorf("tokenizer.json has no pre_tokenizer: a byte-level BPE file needs a ByteLevel pre-tokenizer")
	}
	var split, byteLevel *componentJSON
	switch p.Type {
	case "ByteLevel":
		byteLevel = p
	case "Sequence":
		if len(p.Pretokenizers) != 2 || p.Pretokenizers[0].Type != "Split" || p.Pretokenizers[1].Type != "ByteLevel" {
			return nil, fmt.Errorf("tokenizer.json has a pre_tokenizer sequence other than [Split, ByteLevel]: not implemented")
		}
		split, byteLevel = &p.Pretokenizers[0], &p.Pretokenizers[1]
	default:
		return nil, fmt.Errorf("tokenizer.json has pre_tokenizer %q: only ByteLevel (optionally after a Split) is implemented", p.Type)
	}
	if byteLevel.AddPrefixSpace {
		return nil, fmt.Errorf("tokenizer.json sets ByteLevel add_prefix_space: not implemented")
	}
	byteLevelSplits := byteLevel.UseRegex == nil || *byteLevel.UseRegex
	switch {
	case split == nil && byteLevelSplits:
		return newSplitter(gpt2Pattern)
	case split == nil:
		return wholeText{}, nil
	case byteLevelSplits:
		return nil, fmt.Errorf("tokenizer.json splits twice (Split, then ByteLevel with use_regex): not implemented")
	}
	if split.Pattern == nil || split.Pattern.Regex == nil {
		return nil, fmt.Errorf("tokenizer.json Split pre-tokenizer has no Regex pattern: only regex splits are implemented")
	}
	if split.Behavior != "Isolated" || split.Invert {
		return nil, fmt.Errorf("tokenizer.json Split pre-tokenizer has behavior %q invert=%v: only Isolated, not inverted, is implemented", split.Behavior, split.Invert)
	}
	return newSplitter(*split.Pattern.Regex)
}

func checkDecoder(d *componentJSON) error {
	if d == nil || d.Type != "ByteLevel" {
		typ := "none"
		if d != nil {
			typ = d.Type
		}
		return fmt.Errorf("tokenizer.json has decoder %s: only ByteLevel is implemented", typ)
	}
	return nil
}
