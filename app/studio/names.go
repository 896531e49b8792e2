package studio

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// The names on the hub. Every job lives on a subject of its model and batch
// (easel.jobs.<key>.<batch>, key from the job's Fingerprint): a worker's durable pull consumer
// takes the jobs its model and Easel version can render (easel.jobs.<key>.>), and the hub's
// per-subject limit keeps one batch from holding the whole queue (HubConfig.PerBatch).
const (
	StreamName            = "EASEL_JOBS"      // the work-queue stream of jobs, one message per image
	jobsPrefix            = "easel.jobs."     // + fingerprint key + "." + batch
	progressPrefix        = "easel.progress." // + batch.index: steps, hand-backs and failures
	InputsBucket          = "EASEL_INPUTS"    // condition/start images, masks and LoRAs, by digest
	ResultsBucket         = "EASEL_RESULTS"   // the finished PNGs, one object per (batch, index, attempt, worker)
	WorkersBucket         = "EASEL_WORKERS"   // key-value: each worker's status, expiring when it goes silent
	BatchesBucket         = "EASEL_BATCHES"   // key-value: each batch's client heartbeat, expiring when it goes silent
	consumerPrefix        = "render-"         // + fingerprint key
	maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamName + "."
	terminatedAdvisory    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + StreamName + "."
)

// Defaults of the hub.
const (
	DefaultAckWait       = 60 * time.Second // a job silent this long goes to another worker
	DefaultMaxDeliver    = 3                // deliveries before the client is told the job failed
	DefaultQueueLength   = 32               // jobs in the queue at most (waiting or rendering)
	DefaultPerBatch      = 8                // jobs of one batch in the queue at most
	DefaultClientTimeout = 30 * time.Second // a batch whose client is silent this long is dropped
	DefaultMaxAge        = 24 * time.Hour   // a job older than this leaves the queue
	maxHeartbeat         = 10 * time.Second // InProgress at least this often, also while loading
	statusTTL            = 30 * time.Second // a worker's status expires this long after its last word
	statusEvery          = 5 * time.Second
)

// Fingerprint says what a worker needs to render a job bit for bit as the client's own Easel
// would: the same Easel version and the same model file (its identity from the .cmf header and
// tensor table, not a hash of 13 GB). LoRAs travel with the job through the inputs bucket, by
// SHA-256, so every worker has them; their hashes are listed for the record.
type Fingerprint struct {
	Easel string   `json:"easel"`
	Model string   `json:"model"`
	LoRAs []string `json:"loras,omitempty"`
	// Kind is what the job's request is (KindFlags, KindPipeline): a worker pulls only the kinds
	// its renderer reads, so a window lent to the studio never takes a command line's job.
	Kind string `json:"kind,omitempty"`
}

// The kinds of job request.
const (
	KindFlags    = ""         // the generate flags of one image (easel generate --studio)
	KindPipeline = "pipeline" // a pipeline request (studiogen: easel serve --studio, the window)
)

// Key is the subject token of the fingerprint's jobs: the Easel version, model identity and job
// kind hashed (LoRAs travel with the job, so they do not split the queue).
func (f Fingerprint) Key() string {
	s := f.Easel + "\x00" + f.Model
	if f.Kind != KindFlags {
		s += "\x00" + f.Kind
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// WithKind is the fingerprint for jobs of another kind.
func (f Fingerprint) WithKind(kind string) Fingerprint {
	f.Kind = kind
	return f
}

func jobsSubject(key, batch string) string { return jobsPrefix + key + "." + batch }
func jobsFilter(key string) string         { return jobsPrefix + key + ".>" }

// batchOfSubject is the batch a job's subject names ("" when it names none).
func batchOfSubject(subject string) string {
	rest, ok := strings.CutPrefix(subject, jobsPrefix)
	if !ok {
		return ""
	}
	_, batch, _ := strings.Cut(rest, ".")
	return batch
}

func consumerName(key string) string { return consumerPrefix + key }
func progressSubject(batch string, i int) string {
	return progressPrefix + batch + "." + strconv.Itoa(i)
}
func resultName(batch string, i, attempt int, worker string) string {
	return batch + "/" + strconv.Itoa(i) + "/" + strconv.Itoa(attempt) + "-" + worker
}
