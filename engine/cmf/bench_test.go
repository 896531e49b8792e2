package cmf

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"easel/engine/quant"
)

// benchTensors is a ~1 GB model: 120 q4tp matrices of the real DiT's [4096, 4096] projections.
const benchTensors = 120

var benchShape = []int{4096, 4096}

// writeBenchFile streams the synthetic model into dir and returns its path and size.
func writeBenchFile(b *testing.B, dir string) (string, int64) {
	b.Helper()
	n, _ := quant.PayloadSize(quant.Q4TP, benchShape)
	payload := make([]byte, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	path := filepath.Join(dir, "bench.cmf")
	w, err := Create(path, Options{ExpectedTensors: benchTensors})
	if err != nil {
		b.Fatal(err)
	}
	w.SetHeader(sampleHeader())
	for i := range benchTensors {
		payload[0] = byte(i)
		if err := w.AddTensor("dit.transformer_blocks."+itoa(i)+".attn.to_q.weight", quant.Q4TP, benchShape, payload); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// The read benchmarks share one file per process, removed by TestMain.
var (
	benchOnce sync.Once
	benchDir  string
	benchPath string
	benchSize int64
)

func sharedBenchFile(b *testing.B) (string, int64) {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cmf-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		benchPath, benchSize = writeBenchFile(b, dir)
	})
	if benchPath == "" {
		b.Fatal("the shared benchmark file could not be written")
	}
	return benchPath, benchSize
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkOpenVerify measures Open plus a full Verify (every hash) of a ~1 GB file that is in
// the page cache (it was just written); MB/s is over the whole file.
func BenchmarkOpenVerify(b *testing.B) {
	path, size := sharedBenchFile(b)
	b.SetBytes(size)
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Verify(nil); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	// CPU seconds per GB is steadier than wall time on a shared machine.
	b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N)/(float64(size)/1e9), "cpu-s/GB")
}

// processCPU is the user + system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOpen measures Open alone (envelope, header JSON, directory; no hashing).
func BenchmarkOpen(b *testing.B) {
	path, _ := sharedBenchFile(b)
	b.ResetTimer()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkHash64 is the single-core hash throughput Verify builds on.
func BenchmarkHash64(b *testing.B) {
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		Hash64(buf)
	}
}

// BenchmarkWrite measures the streaming writer on the same ~1 GB model (to the page cache;
// includes the final fsync).
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for b.Loop() {
		_, size = writeBenchFile(b, dir)
	}
	b.SetBytes(size)
}
