package convert

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"easel/engine/safetensors"
)

// A Hugging Face Qwen-Image-2.1 snapshot (qi21-spec.md §11.1): model_index.json, and one folder
// per component holding its config and its weights, either one safetensors file or shards listed
// by a *.safetensors.index.json.

// pipelineClass is model_index.json's _class_name for Qwen-Image-2.1.
const pipelineClass = "QwenImage21Pipeline"

// component is one weight folder of the snapshot and the file names its weights go by.
type component struct {
	dir, single, index string
}

var (
	transformerComponent = component{"transformer", "diffusion_pytorch_model.safetensors", "diffusion_pytorch_model.safetensors.index.json"}
	textEncoderComponent = component{"text_encoder", "model.safetensors", "model.safetensors.index.json"}
	vaeComponent         = component{"vae", "diffusion_pytorch_model.safetensors", "diffusion_pytorch_model.safetensors.index.json"}
)

// redownload is the advice for a snapshot that is incomplete.
const redownload = "the download is incomplete or damaged: download the snapshot again (e.g. `hf download Qwen/Qwen-Image-2.1 --local-dir DIR`) and convert again"

// shard is one safetensors file of a component. Its header is parsed through engine/safetensors;
// tensor data is read with ReadAt, never through the mapping, so that weights already converted
// do not stay resident in memory.
type shard struct {
	rel     string // path relative to the snapshot root, for messages
	st      *safetensors.File
	file    *os.File
	tensors []*safetensors.Tensor // in data order
	offsets map[string]int64      // file offset of each tensor's data
}

func (s *shard) close() {
	s.st.Close()
	s.file.Close()
}

// openShard parses one safetensors file of the snapshot.
func openShard(root, rel string) (*shard, error) {
	path := filepath.Join(root, rel)
	st, err := safetensors.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is missing from the snapshot: %w: %s", rel, errMissingFile, redownload)
		}
		return nil, fmt.Errorf("%s cannot be read as safetensors: %v; %s", rel, err, redownload)
	}
	file, err := os.Open(path)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	offsets, err := dataOffsets(file)
	if err != nil {
		st.Close()
		file.Close()
		return nil, fmt.Errorf("%s: %v; %s", rel, err, redownload)
	}
	s := &shard{rel: rel, st: st, file: file, offsets: offsets}
	for _, name := range st.Names() {
		s.tensors = append(s.tensors, st.Tensor(name))
	}
	return s, nil
}

// dataOffsets reads the file offset of every tensor's data from a safetensors header (8-byte
// length, JSON, then the data section the JSON's data_offsets are relative to). engine/safetensors
// has already validated the header; this only locates the data for ReadAt.
func dataOffsets(f *os.File) (map[string]int64, error) {
	var n [8]byte
	if _, err := f.ReadAt(n[:], 0); err != nil {
		return nil, fmt.Errorf("reading the header length: %v", err)
	}
	size := binary.LittleEndian.Uint64(n[:])
	header := make([]byte, size)
	if _, err := f.ReadAt(header, 8); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading the header: %v", err)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(header, &entries); err != nil {
		return nil, fmt.Errorf("header is not JSON: %v", err)
	}
	offsets := make(map[string]int64, len(entries))
	for name, raw := range entries {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: %v", name, err)
		}
		offsets[name] = 8 + int64(size) + e.Offsets[0]
	}
	return offsets, nil
}

// shardFiles lists a component's weight files relative to the snapshot root: the one file, or the
// shards its index names, sorted by file name (cortiq's order). Every shard must exist. For a
// sharded component it also returns the index's weight map (tensor name → file, root-relative).
func shardFiles(root string, c component) (files []string, weightMap map[string]string, err error) {
	indexRel := filepath.Join(c.dir, c.index)
	raw, err := os.ReadFile(filepath.Join(root, indexRel))
	if errors.Is(err, fs.ErrNotExist) {
		single := filepath.Join(c.dir, c.single)
		if _, err := os.Stat(filepath.Join(root, single)); err != nil {
			return nil, nil, fmt.Errorf("%s has neither %s nor %s: %s", c.dir, c.single, c.index, redownload)
		}
		return []string{single}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", indexRel, err)
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &index); err != nil || len(index.WeightMap) == 0 {
		return nil, nil, fmt.Errorf("%s has no weight_map: %s", indexRel, redownload)
	}
	weightMap = make(map[string]string, len(index.WeightMap))
	for name, f := range index.WeightMap {
		weightMap[name] = filepath.Join(c.dir, f)
		files = append(files, filepath.Join(c.dir, f))
	}
	slices.Sort(files)
	files = slices.Compact(files)
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			return nil, nil, fmt.Errorf("%s is missing (it is listed in %s): %s", f, indexRel, redownload)
		}
	}
	return files, weightMap, nil
}

// openComponent opens every shard of a component and checks that each tensor its index lists is
// in the shard the index names.
func openComponent(root string, c component) ([]*shard, error) {
	files, weightMap, err := shardFiles(root, c)
	if err != nil {
		return nil, err
	}
	var shards []*shard
	closeAll := func() {
		for _, s := range shards {
			s.close()
		}
	}
	for _, f := range files {
		s, err := openShard(root, f)
		if err != nil {
			closeAll()
			return nil, err
		}
		shards = append(shards, s)
	}
	for name, f := range weightMap {
		i := slices.IndexFunc(shards, func(s *shard) bool { return s.rel == f })
		if shards[i].st.Tensor(name) == nil {
			closeAll()
			return nil, fmt.Errorf("%s lacks tensor %q, which %s places there: %s", f, name, filepath.Join(c.dir, c.index), redownload)
		}
	}
	return shards, nil
}

// readJSON reads a small JSON file of the snapshot, keeping its bytes.
// errMissingFile marks a snapshot file that is not there (as opposed to unreadable or damaged).
var errMissingFile = errors.New("no such file")

func readJSON(root, rel string, v any) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is missing from the snapshot: %w: %s", rel, errMissingFile, redownload)
		}
		return nil, err
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %v; %s", rel, err, redownload)
		}
	}
	return raw, nil
}
