package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"easel/engine/ml/cpu"
	"easel/engine/qi21"
	"easel/engine/quant"
)

// benchmarks are the machine measurements `easel bench NAME` runs.
var benchmarks = map[string]func(args []string, stdout, stderr io.Writer) int{
	"describe":  benchDescribe,
	"dit-cpu":   benchDiTCPU,
	"dit-metal": benchDiTMetal,
	"pipeline":  benchPipeline,
}

func init() {
	register(&Command{
		Name:    "bench",
		Usage:   "NAME [--json] (names: " + strings.Join(benchNames(), ", ") + ")",
		Summary: "measure this machine (e.g. `easel bench dit-cpu`)",
		Run:     runBench,
	})
}

func benchNames() []string {
	names := make([]string, 0, len(benchmarks))
	for n := range benchmarks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || benchmarks[args[0]] == nil {
		fmt.Fprintf(stderr, "easel bench: name one benchmark: %s\n", strings.Join(benchNames(), ", "))
		return ExitUsage
	}
	return benchmarks[args[0]](args[1:], stdout, stderr)
}

// ditCPUReport is `easel bench dit-cpu --json`.
type ditCPUReport struct {
	Backend      string             `json:"backend"`
	Cores        int                `json:"cores"`
	Geometry     string             `json:"geometry"`
	SgemmShape   string             `json:"sgemm_shape"`
	SgemmMS      float64            `json:"sgemm_ms"`
	SgemmCPUMS   float64            `json:"sgemm_cpu_ms"`
	SgemmGFLOPs  float64            `json:"sgemm_gflop_per_s"`
	Blocks       []*qi21.BlockBench `json:"blocks"`
	RatioToSgemm map[string]float64 `json:"ratio_to_sgemm"`
	CPURatio     map[string]float64 `json:"cpu_time_ratio_to_sgemm"`
	GoalRatio    float64            `json:"goal_ratio"`
	LoRA         []loraBench        `json:"lora,omitempty"`
}

// loraBench is one codec's block with a LoRA of one rank on all seven projections, against the
// same block without it, measured in the same run.
type loraBench struct {
	Codec      string  `json:"codec"`
	Rank       int     `json:"rank"`
	MedianMS   float64 `json:"median_ms"`
	CPUMS      float64 `json:"median_cpu_ms"`
	Ratio      float64 `json:"ratio_to_block"`
	CPURatio   float64 `json:"cpu_ratio_to_block"`
	FlopsRatio float64 `json:"flop_ratio_to_block"` // (block + LoRA FLOPs) / block FLOPs
}

// benchDiTCPU times one block of the real geometry on the CPU backend against cblas sgemm.
func benchDiTCPU(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench dit-cpu", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	reps := fs.Int("reps", 3, "repetitions per measurement (the median is reported)")
	rows := fs.Int("rows", 1024, "target rows")
	prefix := fs.Int("prefix", 256, "cached prefix rows")
	codecs := fs.String("codecs", "q4tp,q8_2f", "weight codecs to measure, comma-separated")
	loraRanks := fs.String("lora-rank", "", "also measure the block with a LoRA of each of these ranks (comma-separated, e.g. 64,178) on all seven projections")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *reps < 1 || *rows < 1 || *prefix < 0 {
		fmt.Fprintln(stderr, "easel bench dit-cpu: --reps and --rows must be at least 1, --prefix at least 0")
		return ExitUsage
	}
	cfg := qi21.PublishedConfig()
	be := cpu.New()
	rep := &ditCPUReport{
		Backend:      be.Name(),
		Cores:        runtime.GOMAXPROCS(0),
		Geometry:     fmt.Sprintf("hidden %d, %d heads × %d, MLP %d", cfg.Hidden(), cfg.Heads, cfg.HeadDim, cfg.MLPHidden()),
		SgemmShape:   "1024x4096x4096",
		RatioToSgemm: map[string]float64{},
		CPURatio:     map[string]float64{},
		GoalRatio:    1.3,
	}
	sg := cpu.MeasureSgemm(1024, 4096, 4096, *reps)
	rate := sg.GFLOPs
	rep.SgemmMS, rep.SgemmCPUMS, rep.SgemmGFLOPs = float64(sg.Wall.Microseconds())/1e3, float64(sg.CPU.Microseconds())/1e3, rate
	for _, name := range strings.Split(*codecs, ",") {
		d, ok := quant.ParseDType(strings.TrimSpace(name))
		if !ok {
			fmt.Fprintf(stderr, "easel bench dit-cpu: unknown codec %q (try q4tp, q8_2f, q8_row, bf16, f16)\n", name)
			return ExitUsage
		}
		m, err := qi21.NewRandomBlockModel(cfg, d, be)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-cpu: building a %v block: %v\n", d, err)
			return ExitFailure
		}
		r, err := m.BenchBlock(*rows, *prefix, *reps, cpu.ProcessCPUTime)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-cpu: running the %v block: %v\n", d, err)
			return ExitFailure
		}
		rep.Blocks = append(rep.Blocks, r)
		if *loraRanks != "" {
			for _, rs := range strings.Split(*loraRanks, ",") {
				rank, err := strconv.Atoi(strings.TrimSpace(rs))
				if err != nil || rank < 1 {
					fmt.Fprintf(stderr, "easel bench dit-cpu: --lora-rank %q: give whole ranks of at least 1, like 64,178\n", *loraRanks)
					return ExitUsage
				}
				a, err := qi21.RandomBlockLoRA(cfg, rank)
				if err == nil {
					err = m.SetLoRAs([]qi21.LoRA{{Adapter: a, Strength: 1}})
				}
				if err != nil {
					fmt.Fprintf(stderr, "easel bench dit-cpu: a rank-%d LoRA: %v\n", rank, err)
					return ExitFailure
				}
				lr, err := m.BenchBlock(*rows, *prefix, *reps, cpu.ProcessCPUTime)
				m.SetLoRAs(nil)
				if err != nil {
					fmt.Fprintf(stderr, "easel bench dit-cpu: the %v block with a rank-%d LoRA: %v\n", d, rank, err)
					return ExitFailure
				}
				lb := loraBench{Codec: r.Codec, Rank: rank, MedianMS: lr.MedianMS, CPUMS: lr.CPUMS, Ratio: lr.Median.Seconds() / r.Median.Seconds(),
					FlopsRatio: 1 + qi21.BlockLoRAFlops(cfg, *rows, rank)/(r.GemmFlops+r.AttnFlops)}
				if r.CPU > 0 {
					lb.CPURatio = lr.CPU.Seconds() / r.CPU.Seconds()
				}
				rep.LoRA = append(rep.LoRA, lb)
			}
		}
		sgemmFlops := 2.0 * 1024 * 4096 * 4096
		rep.RatioToSgemm[r.Codec] = r.Median.Seconds() / ((r.GemmFlops + r.AttnFlops) / (rate * 1e9))
		if sg.CPU > 0 {
			rep.CPURatio[r.Codec] = r.CPU.Seconds() / ((r.GemmFlops + r.AttnFlops) / sgemmFlops * sg.CPU.Seconds())
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	fmt.Fprintf(stdout, "dit-cpu: one Qwen-Image-2.1 block (%s), %d target rows against %d prefix rows\n", rep.Geometry, *rows, *prefix)
	fmt.Fprintf(stdout, "backend %s, %d cores, median of %d\n", rep.Backend, rep.Cores, *reps)
	fmt.Fprintf(stdout, "sgemm %s: %.1f ms (%.1f ms CPU), %.1f GFLOP/s\n", rep.SgemmShape, rep.SgemmMS, rep.SgemmCPUMS, rep.SgemmGFLOPs)
	for _, r := range rep.Blocks {
		var classes []string
		for _, c := range []string{"gemm", "attn", "norm", "rope", "act", "copy"} {
			if ms, ok := r.ClassMS[c]; ok {
				classes = append(classes, fmt.Sprintf("%s %.0f", c, ms))
			}
		}
		fmt.Fprintf(stdout, "%-6s %.1f ms per block (%.1f ms CPU), %.1f GFLOP/s (%.1f GFLOP); %.2f× its FLOPs at the sgemm rate, %.2f× in CPU time (goal ≤ %.1f×); ms by class: %s\n",
			r.Codec, r.MedianMS, r.CPUMS, r.GFLOPs, (r.GemmFlops+r.AttnFlops)/1e9, rep.RatioToSgemm[r.Codec], rep.CPURatio[r.Codec], rep.GoalRatio, strings.Join(classes, " · "))
	}
	for _, l := range rep.LoRA {
		fmt.Fprintf(stdout, "%-6s + rank-%d LoRA on all 7 projections: %.1f ms (%.1f ms CPU), %.3f× the block (%.3f× in CPU time); FLOPs %.3f× the block's\n",
			l.Codec, l.Rank, l.MedianMS, l.CPUMS, l.Ratio, l.CPURatio, l.FlopsRatio)
	}
	return ExitOK
}
