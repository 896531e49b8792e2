package unfinished

import (
	"easel/app/checkpoint"
	"easel/engine/pipeline"
)

// checkpointLoRAs are the request's LoRA files as a checkpoint records them (path, SHA-256,
// strength, in order). A file that cannot be read is recorded without its digest, which no
// resume matches.
func checkpointLoRAs(files []pipeline.LoRAFile) ([]checkpoint.LoRA, error) {
	var ls []checkpoint.LoRA
	for _, lf := range files {
		ls = append(ls, checkpoint.LoRA{Path: lf.Path, Strength: lf.Strength})
	}
	return checkpoint.HashLoRAs(ls)
}

// hashLoRAs starts hashing the request's LoRA files at once (the job is queued; its first step is
// seconds away) and returns what waits for the digests.
func hashLoRAs(files []pipeline.LoRAFile) func() []checkpoint.LoRA {
	files = append([]pipeline.LoRAFile(nil), files...)
	done := make(chan struct{})
	var ls []checkpoint.LoRA
	go func() {
		defer close(done)
		ls, _ = checkpointLoRAs(files)
	}()
	return func() []checkpoint.LoRA {
		<-done
		return ls
	}
}
