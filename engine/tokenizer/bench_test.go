package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"easel/internal/golden"
)

// BenchmarkLoad: parsing the real 11 MB Qwen tokenizer.json (bytes already in memory).
func BenchmarkLoad(b *testing.B) {
	snap, err := golden.ModelSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(snap, "processor", "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	cpu := startCPUClock()
	for b.Loop() {
		if _, err := Load(data); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, 1, "cpu-ms/op", time.Millisecond)
}

// cpuClock measures the process's CPU time (user + system, all threads, GC included), which a
// busy shared machine inflates far less than wall time.
type cpuClock time.Duration

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPUClock() cpuClock { return cpuClock(processCPU()) }

// report adds the CPU time per op divided by perOp, in the given unit, as a benchmark metric.
func (c cpuClock) report(b *testing.B, perOp int, metric string, unit time.Duration) {
	used := processCPU() - time.Duration(c)
	b.ReportMetric(float64(used)/float64(unit)/float64(b.N)/float64(perOp), metric)
}

// longPrompt is a mixed English/Chinese/code prompt of about 2,000 tokens.
func longPrompt(tb testing.TB, tok *Tokenizer) (string, int) {
	tb.Helper()
	unit := "A capybara wearing a wizard hat, oil painting, 4k, dramatic light — 一只戴着巫师帽的水豚，油画风格。\n" +
		"The background: misty mountains at 06:30, f/1.8; don't over-saturate (it's \"subtle\").  \t"
	text := strings.Repeat(unit, 1)
	for len(tok.Encode(text)) < 2000 {
		text += unit
	}
	return text, len(tok.Encode(text))
}

// BenchmarkEncode2000: encoding a ~2,000-token prompt; ns/token is reported.
func BenchmarkEncode2000(b *testing.B) {
	tok := qwenTokenizer(b)
	text, n := longPrompt(b, tok)
	b.SetBytes(int64(len(text)))
	cpu := startCPUClock()
	for b.Loop() {
		tok.Encode(text)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
	cpu.report(b, n, "cpu-ns/token", time.Nanosecond)
	b.ReportMetric(float64(n), "tokens")
}

// BenchmarkSplitQwen and BenchmarkSplitRegexp2 compare the hand-written pre-tokenizer with
// regexp2 running the same pattern, on the same prompt.
func BenchmarkSplitQwen(b *testing.B) { benchmarkSplit(b, qwenSplitter{}) }

func BenchmarkSplitRegexp2(b *testing.B) {
	s, err := newRegexSplitter(qwenPattern)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkSplit(b, s)
}

func benchmarkSplit(b *testing.B, s splitter) {
	text, _ := longPrompt(b, qwenTokenizer(b))
	b.SetBytes(int64(len(text)))
	cpu := startCPUClock()
	for b.Loop() {
		s.split(text, func(string) {})
	}
	cpu.report(b, 1, "cpu-µs/op", time.Microsecond)
}
