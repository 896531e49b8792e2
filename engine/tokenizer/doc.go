// Package tokenizer turns prompt text into the token ids the Qwen3-VL text encoder reads, and ids
// back into text, exactly as the Hugging Face tokenizers library does with Qwen's tokenizer.json.
//
// The pipeline of one Encode call, in order:
//
//  1. Added tokens (<|im_start|>, <|image_pad|>, …, all 26 in Qwen's file) are found in the raw
//     text, leftmost and longest first, and become their ids directly (added.go).
//  2. Every stretch of text between them is NFC-normalized and split into pieces by the
//     pre-tokenizer pattern stored in the file (pretokenize.go: a hand-written matcher for Qwen's
//     pattern, regexp2 for any other).
//  3. Each piece's UTF-8 bytes are merged by byte-level BPE, lowest merge rank first, exactly as
//     the file's merges list orders them (bpe.go).
//
// Load reads the bytes of a tokenizer.json, so the vocabulary can come from a Hugging Face
// snapshot (processor/tokenizer.json) or from the vocab section of a .cmf file.
package tokenizer
