package convert

// Estimate is what a conversion will need, worked out from the snapshot's configs and safetensors
// headers without reading any weights: the first-run window shows it before starting.
type Estimate struct {
	Tensors     int   // tensors the file will hold, config blobs included
	SourceBytes int64 // weight bytes that will be read from the snapshot
	OutputBytes int64 // an upper bound of the .cmf's size: the free space Convert insists on
}

// EstimateConversion plans the conversion of the snapshot at dir as Convert would, and returns
// its size. It fails with the same messages Convert would give for an incomplete snapshot.
func EstimateConversion(dir string, opts Options) (*Estimate, error) {
	j, err := prepare(dir, opts)
	if err != nil {
		return nil, err
	}
	defer j.close()
	e := &Estimate{Tensors: len(j.blobs) + len(j.items), OutputBytes: j.outputBound()}
	for _, it := range j.items {
		e.SourceBytes += int64(len(it.src.Data))
	}
	return e, nil
}
