package tokenizer

import (
	"container/heap"
	"fmt"
)

// bpe is a byte-level BPE model: the id of every single byte, and for every mergeable pair of
// ids its rank (position in the file's merges list) and the id of the merged token.
type bpe struct {
	byteID       [256]int32
	merges       map[uint64]mergeRule
	vocab        map[string]int32 // raw bytes of every model token → id
	ignoreMerges bool
}

// maxTokenID bounds the ids a file may use (the decode table has one entry per id).
const maxTokenID = 1 << 24

type mergeRule struct {
	rank int32
	id   int32
}

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

func newBPE(m modelJSON) (*bpe, error) {
	switch {
	case m.Type != "BPE":
		return nil, fmt.Errorf("tokenizer.json has model type %q: only BPE is implemented", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, fmt.Errorf("tokenizer.json BPE has dropout %g: only deterministic BPE (no dropout) is implemented", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("tokenizer.json BPE uses subword prefixes or suffixes: not implemented for byte-level BPE")
	case m.ByteFallback:
		return nil, fmt.Errorf("tokenizer.json BPE sets byte_fallback: not implemented (byte-level BPE does not need it)")
	case len(m.Vocab) == 0:
		return nil, fmt.Errorf("tokenizer.json BPE has an empty vocab")
	}
	b := &bpe{merges: make(map[uint64]mergeRule, len(m.Merges)), vocab: make(map[string]int32, len(m.Vocab)), ignoreMerges: m.IgnoreMerges}
	for i := range b.byteID {
		b.byteID[i] = -1
	}
	for _, entry := range m.Vocab {
		token, id := entry.token, entry.id
		raw, ok := decodeByteLevel(token)
		if !ok {
			return nil, fmt.Errorf("tokenizer.json vocab entry %q (id %d) is not spelled in the byte-level alphabet", token, id)
		}
		if id < 0 || id > maxTokenID {
			return nil, fmt.Errorf("tokenizer.json vocab entry %q has id %d out of range", token, id)
		}
		b.vocab[raw] = int32(id)
		if len(raw) == 1 {
			b.byteID[raw[0]] = int32(id)
		}
	}
	for i, id := range b.byteID {
		if id < 0 {
			return nil, fmt.Errorf("tokenizer.json vocab has no token for byte 0x%02x: not a byte-level vocabulary", i)
		}
	}
	for rank, pair := range m.Merges {
		rawLeft, okL := decodeByteLevel(pair[0])
		rawRight, okR := decodeByteLevel(pair[1])
		left, okL2 := b.vocab[rawLeft]
		right, okR2 := b.vocab[rawRight]
		merged, okM := b.vocab[rawLeft+rawRight] // the alphabet maps rune by rune, so spellings concatenate
		if !okL || !okR || !okL2 || !okR2 || !okM {
			return nil, fmt.Errorf("tokenizer.json merge %d (%q, %q) names a token missing from the vocab", rank, pair[0], pair[1])
		}
		// As in Hugging Face tokenizers, a pair listed twice keeps its last rank.
		b.merges[pairKey(left, right)] = mergeRule{rank: int32(rank), id: merged}
	}
	return b, nil
}

// symbol is one token of a word while it is being merged; a removed symbol has length 0.
type symbol struct {
	id         int32
	prev, next int32 // neighbours' indices, -1 at the ends
	length     int32 // bytes covered
}

// candidate is a possible merge of the symbol at pos with its right neighbour.
type candidate struct {
	rank, pos, id int32
}

// candidates is a min-heap by rank, then by position: the order Hugging Face's Word::merge_all
// applies merges in.
type candidates []candidate

func (c candidates) Len() int { return len(c) }
func (c candidates) Less(i, j int) bool {
	if c[i].rank != c[j].rank {
		return c[i].rank < c[j].rank
	}
	return c[i].pos < c[j].pos
}
func (c candidates) Swap(i, j int) { c[i], c[j] = c[j], c[i] }
func (c *candidates) Push(x any)   { *c = append(*c, x.(candidate)) }
func (c *candidates) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// encodeWord appends the ids of one pre-tokenized piece (its UTF-8 bytes) to ids.
func (b *bpe) encodeWord(word string, ids []int) []int {
	if len(word) == 0 {
		return ids
	}
	if b.ignoreMerges {
		if id, ok := b.vocab[word]; ok {
			return append(ids, int(id))
		}
	}
	if len(word) == 1 {
		return append(ids, int(b.byteID[word[0]]))
	}
	syms := make([]symbol, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = symbol{id: b.byteID[word[i]], prev: int32(i - 1), next: int32(i + 1), length: 1}
	}
	syms[len(syms)-1].next = -1

	queue := make(candidates, 0, len(word))
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := b.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			queue = append(queue, candidate{rank: m.rank, pos: int32(i), id: m.id})
		}
	}
	heap.Init(&queue)
	for queue.Len() > 0 {
		top := heap.Pop(&queue).(candidate)
		cur := &syms[top.pos]
		if cur.length == 0 || cur.next < 0 {
			continue
		}
		rightPos := cur.next
		right := syms[rightPos]
		// Skip entries made stale by an earlier merge on either side.
		if m, ok := b.merges[pairKey(cur.id, right.id)]; !ok || m.id != top.id {
			continue
		}
		cur.id = top.id
		cur.length += right.length
		cur.next = right.next
		syms[rightPos].length = 0
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if m, ok := b.merges[pairKey(syms[cur.prev].id, cur.id)]; ok {
				heap.Push(&queue, candidate{rank: m.rank, pos: cur.prev, id: m.id})
			}
		}
		if cur.next >= 0 {
			if m, ok := b.merges[pairKey(cur.id, syms[cur.next].id)]; ok {
				heap.Push(&queue, candidate{rank: m.rank, pos: top.pos, id: m.id})
			}
		}
	}
	// The first symbol only ever absorbs its right neighbours, so the chain starts at 0.
	for i := int32(0); i >= 0; i = syms[i].next {
		ids = append(ids, int(syms[i].id))
	}
	return ids
}
