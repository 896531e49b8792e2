package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/app/serve"
)

// TestLoad32Clients: 32 clients submit a txt2img each at once and poll /progress while they wait,
// on loopback, against a queue bounded at 8 jobs of four 10 ms steps each: every request gets its image (200) or a clear
// 503 with Retry-After, none anything else; afterwards no goroutine and no heap is left behind.
// It logs the figures docs/BENCHMARKS.md records (requests, wall time, /progress p50 under load).
func TestLoad32Clients(t *testing.T) {
	const clients = 32
	url, _, q := listening(t, &fakeGen{pause: 10 * time.Millisecond}, serve.Config{MaxPending: 8})
	http.DefaultClient.CloseIdleConnections()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	baseGoroutines := runtime.NumGoroutine()

	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	var mu sync.Mutex
	codes := map[int]int{}
	var polls []time.Duration
	var bad []string
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() { // poll /progress until the answer comes
				for {
					select {
					case <-done:
						return
					default:
					}
					t0 := time.Now()
					resp, err := client.Get(url + "/sdapi/v1/progress?skip_current_image=true")
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						mu.Lock()
						polls = append(polls, time.Since(t0))
						mu.Unlock()
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()
			defer close(done)
			body := fmt.Sprintf(`{"prompt":"client %d","width":64,"height":64,"steps":4,"seed":%d}`, i, i)
			resp, err := client.Post(url+"/sdapi/v1/txt2img", "application/json", strings.NewReader(body))
			if err != nil {
				mu.Lock()
				bad = append(bad, err.Error())
				mu.Unlock()
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			codes[resp.StatusCode]++
			switch resp.StatusCode {
			case 200:
				if !strings.Contains(string(data), `"images":["`) {
					bad = append(bad, "200 without an image")
				}
			case 503:
				if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(data), "full") {
					bad = append(bad, "503 without Retry-After or a reason: "+string(data))
				}
			default:
				bad = append(bad, fmt.Sprintf("%d: %.200s", resp.StatusCode, data))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if len(bad) > 0 {
		t.Errorf("%d requests got neither an image nor a clear 503: %v", len(bad), bad)
	}
	if codes[200]+codes[503] != clients || codes[200] == 0 {
		t.Errorf("answers %v", codes)
	}
	sort.Slice(polls, func(i, j int) bool { return polls[i] < polls[j] })
	p50 := time.Duration(0)
	if len(polls) > 0 {
		p50 = polls[len(polls)/2]
	}
	t.Logf("load: %d clients, answers %v, wall %.2f s, %d /progress polls, p50 %.2f ms", clients, codes, wall.Seconds(), len(polls), float64(p50.Microseconds())/1000)

	tr.CloseIdleConnections()
	waitFor(t, "the queue to drain", func() bool { return q.Pending() == 0 })
	var after runtime.MemStats
	waitFor(t, "the goroutines to end", func() bool {
		runtime.GC()
		return runtime.NumGoroutine() <= baseGoroutines+2
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The queue keeps its newest finished jobs (jobs.KeepFinished, with their 64² images): far
	// below this bound, which a leak of every answer's images and bodies would pass.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("the heap grew by %d MB over the load", grown>>20)
	}
}
