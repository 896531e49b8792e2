package studio

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
)

// Job is one image of a batch, self-contained: a worker needs nothing else (but the inputs it
// names, from the inputs bucket) to render it as the client's own Easel would.
type Job struct {
	Batch       string      `json:"batch"`
	Index       int         `json:"index"`  // 0-based in the batch
	Images      int         `json:"images"` // the batch's size
	Fingerprint Fingerprint `json:"fingerprint"`
	// Request is the renderer's own description of the image (app/cli: the generate flags of
	// this one image, with its own seed and variation seed; files by digest).
	Request json.RawMessage `json:"request"`
	// Inputs are the objects of the inputs bucket the request refers to.
	Inputs []string `json:"inputs,omitempty"`
	// Previews asks the worker for each step's small preview image with its progress.
	Previews bool `json:"previews,omitempty"`
}

// msgID is the job's Nats-Msg-Id: publishing it twice (a retry after a lost acknowledgement)
// queues it once.
func (j *Job) msgID() string { return j.Batch + "/" + itoa(j.Index) }

// NewBatchID is a fresh batch identifier (subject-safe hex).
func NewBatchID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Progress is what a worker says about the job it holds, on the batch's progress subject.
type Progress struct {
	Batch   string `json:"batch"`
	Index   int    `json:"index"`
	Worker  string `json:"worker"`
	Attempt int    `json:"attempt"`
	Step    int    `json:"step"`
	Steps   int    `json:"steps"`
	// HandedBack: the worker is leaving (quit, or the Mac is going to sleep) and gave the job
	// back to the queue at once.
	HandedBack bool `json:"handed_back,omitempty"`
	// Error: the job cannot be rendered (a bad request); it is not retried.
	Error string `json:"error,omitempty"`
	// Preview is the step's small preview image (PNG), when the job asked for previews.
	Preview []byte `json:"preview,omitempty"`
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
