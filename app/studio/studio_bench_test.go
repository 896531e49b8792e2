package studio

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"
)

// sleeper is a stand-in generator: each job takes d (in 4 steps, with progress), no CPU.
func sleeper(d time.Duration) Renderer {
	return RenderFunc(func(ctx context.Context, job *Job, _ Inputs, progress func(Step)) ([]byte, error) {
		for s := 1; s <= 4; s++ {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(d / 4):
			}
			progress(Step{N: s, Of: 4})
		}
		return []byte("png"), nil
	})
}

// runBatch runs n jobs over workers of the given per-job times on a fresh hub and returns the
// wall time from submission to the last result and the images each worker made.
func runBatch(b *testing.B, n int, perJob []time.Duration) (time.Duration, map[string]int) {
	h := startTestHub(b, HubConfig{Token: testToken})
	var stops []func()
	for i, d := range perJob {
		stops = append(stops, startWorker(b, h, fmt.Sprintf("w%d-%s", i, d), testFP, sleeper(d)))
	}
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	c := dial(b, h, RoleClient, testToken)
	by := map[string]int{}
	start := time.Now()
	err := c.Run(context.Background(), makeJobs(n, testFP), func(ev Event) {
		if ev.Kind == EventResult {
			by[ev.Worker]++
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start), by
}

// idealMakespan is the work-stealing ideal: whichever worker is idle first takes the next job
// (pull), with no overhead at all. It also says how many jobs each worker takes.
func idealMakespan(n int, perJob []time.Duration) (time.Duration, []int) {
	free := make([]time.Duration, len(perJob))
	count := make([]int, len(perJob))
	var end time.Duration
	for range n {
		w := 0
		for i := range free {
			if free[i] < free[w] {
				w = i
			}
		}
		count[w]++
		free[w] += perJob[w]
		end = max(end, free[w])
	}
	return end, count
}

// fluidBound is the makespan if jobs could be split: n over the sum of the workers' rates. No
// scheduler of whole jobs reaches it.
func fluidBound(n int, perJob []time.Duration) time.Duration {
	rate := 0.0
	for _, d := range perJob {
		rate += 1 / d.Seconds()
	}
	return time.Duration(float64(n) / rate * float64(time.Second))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkStudioThreeWorkers: 24 jobs of 200 ms on one worker and on three; reports the
// speed-up of three (the ideal is 3).
func BenchmarkStudioThreeWorkers(b *testing.B) {
	const job = 200 * time.Millisecond
	var one, three []time.Duration
	for b.Loop() {
		t1, _ := runBatch(b, 24, []time.Duration{job})
		t3, _ := runBatch(b, 24, []time.Duration{job, job, job})
		one, three = append(one, t1), append(three, t3)
	}
	m1, m3 := median(one), median(three)
	b.ReportMetric(m1.Seconds(), "s/1-worker")
	b.ReportMetric(m3.Seconds(), "s/3-workers")
	b.ReportMetric(float64(m1)/float64(m3), "speedup")
}

// BenchmarkStudioMixedWorkers: 24 jobs on workers of 100, 200 and 400 ms per job; reports the
// wall time over the work-stealing (pull) ideal and over the fluid bound, and the fast worker's
// images over the slow one's (measured, and in the ideal).
func BenchmarkStudioMixedWorkers(b *testing.B) {
	per := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	var walls []time.Duration
	var fast, slow int
	for b.Loop() {
		wall, by := runBatch(b, 24, per)
		walls = append(walls, wall)
		fast += by["w0-100ms"]
		slow += by["w2-400ms"]
	}
	ideal, count := idealMakespan(24, per)
	fluid := fluidBound(24, per)
	b.ReportMetric(median(walls).Seconds(), "s/batch")
	b.ReportMetric(ideal.Seconds(), "s/pull-ideal")
	b.ReportMetric(float64(median(walls))/float64(ideal), "x-pull-ideal")
	b.ReportMetric(float64(median(walls))/float64(fluid), "x-fluid-bound")
	b.ReportMetric(float64(fast)/float64(max(slow, 1)), "fast/slow-images")
	b.ReportMetric(float64(count[0])/float64(count[2]), "fast/slow-ideal")
}
