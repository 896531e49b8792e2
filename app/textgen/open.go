package textgen

import (
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/qwen3vl"
)

// OpenFile opens the model file at path with a Writer over its text encoder on the CPU (the
// window and the server write beside the generation queue); closeFile releases the file. A file
// without the language head is an error wrapping ErrNoHead.
func OpenFile(path string) (w *Writer, closeFile func() error, err error) {
	f, err := cmf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	enc, err := qwen3vl.NewEncoder(cpu.New(), f)
	if err == nil {
		w, err = New(f, enc)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, f.Close, nil
}
