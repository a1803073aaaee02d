// Command snapshotcycle runs the real kubernetes-sigs descheduler in dry-run mode on the objects of a snapshot file,
// for benchmarks/bench_upstream_file.py: the plan module and upstream on the same objects, side by side.
//
// The objects are held in client-go's fake clientset (the in-memory object tracker upstream's own tests and its
// dry-run sandbox use) instead of an API server, so the figures are upstream's own work: decoding the file, its
// informers' lists and indexes, the dry-run sandbox's mirror of them, and the cycles. The code path is upstream's
// RunDeschedulerStrategies with DryRun set, as `descheduler --dry-run` runs it; only the client differs. The fake
// clientsets' watch channels are made larger than their 100 events (see main).
//
// Cycles run one after another (as with --descheduling-interval) until two in a row evict the same pods: a dry run's
// first cycle may not see the whole cluster yet (see cycleCounter).
//
// Usage: snapshotcycle SNAPSHOT.json POLICY.yaml
// Prints, on stdout, one JSON line: cycles (each with evictions, distinct pods, by_plugin, and at its end the
// seconds since the start of the process, cpu_seconds and max_rss_mib so far), and the same three for the whole
// run. Evictions are counted from upstream's "Evicted pod" log lines (klog -v=1). With SNAPSHOTCYCLE_EVICTED=FILE
// the last cycle's evicted pods (namespace/name) are written there, one per line; with SNAPSHOTCYCLE_V=N, klog's
// lines at verbosity N go to stderr (for debugging; the counts then need N >= 1).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
)

var started = time.Now()

// cycleCounter reads upstream's log lines as klog writes them: each "Evicted pod" (per plugin and pod) and each cycle's closing "Number of evictions/requests", where it notes the time and, once two cycles in a
// row evicted the same pods, stops the run. A dry run's first cycle may start before its sandbox has mirrored every
// object (upstream lists the cluster into the sandbox while the cycle already runs), so it evicts fewer.
type cycleCounter struct {
	debug    bool // copy every line to stderr
	mu       sync.Mutex
	stop     context.CancelFunc
	cycles   []cycle
	current  cycle
	previous map[string]struct{}
}

type cycle struct {
	Evictions  int            `json:"evictions"`
	Pods       int            `json:"pods"`
	ByPlugin   map[string]int `json:"by_plugin"`
	Seconds    float64        `json:"seconds"`
	CPUSeconds float64        `json:"cpu_seconds"`
	MaxRSSMiB  float64        `json:"max_rss_mib"`
	pods       map[string]struct{}
}

const maxCycles = 6

var (
	podField      = regexp.MustCompile(` pod="([^"]+)"`)
	strategyField = regexp.MustCompile(` strategy="([^"]+)"`)
)

func newCycle() cycle { return cycle{ByPlugin: map[string]int{}, pods: map[string]struct{}{}} }

func (c *cycleCounter) Write(line []byte) (int, error) {
	text := string(line)
	if c.debug {
		_, _ = os.Stderr.Write(line)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case strings.Contains(text, `"Evicted pod`): // "Evicted pod" or "Evicted pod in dry run mode"
		c.current.Evictions++
		if match := strategyField.FindStringSubmatch(text); match != nil {
			c.current.ByPlugin[match[1]]++
		}
		if match := podField.FindStringSubmatch(text); match != nil {
			c.current.pods[match[1]] = struct{}{}
		}
	case strings.Contains(text, `"Number of evictions/requests"`):
		c.current.Seconds = time.Since(started).Seconds()
		c.current.CPUSeconds, c.current.MaxRSSMiB = resourceUsage()
		c.current.Pods = len(c.current.pods)
		settled := c.previous != nil && sameKeys(c.previous, c.current.pods) && len(c.previous) > 0
		c.previous = c.current.pods
		c.cycles = append(c.cycles, c.current)
		c.current = newCycle()
		if settled || len(c.cycles) >= maxCycles {
			c.stop()
		}
	}
	return len(line), nil
}

func sameKeys(a, b map[string]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for key := range a {
		if _, ok := b[key]; !ok {
			return false
		}
	}
	return true
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: snapshotcycle SNAPSHOT.json POLICY.yaml")
		os.Exit(2)
	}
	ctx, stop := context.WithCancel(context.Background())
	verbosity := os.Getenv("SNAPSHOTCYCLE_V")
	counter := &cycleCounter{debug: verbosity != "", stop: stop, current: newCycle()}
	if verbosity == "" {
		verbosity = "1" // the eviction and end-of-cycle lines
	}
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("v", verbosity)
	_ = klogFlags.Set("logtostderr", "false")
	_ = klogFlags.Set("alsologtostderr", "false")
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(counter)

	objects, err := readSnapshot(os.Args[1])
	if err != nil {
		fail(err)
	}
	// the fake clientsets' watches hold 100 events; an in-memory list (the dry-run sandbox mirroring the informers)
	// and a plugin's evictions in a row overflow that ("channel full" panic). Larger channels change no result.
	watch.DefaultChanSize = 1 << 18
	client := fake.NewSimpleClientset(objects...)
	objects = nil

	descheduler.SetupPlugins()
	server, err := options.NewDeschedulerServer()
	if err != nil {
		fail(err)
	}
	server.Client, server.EventClient = client, client
	server.DefaultFeatureGates = features.DefaultMutableFeatureGate // what options.Apply sets: the default gates
	server.DryRun = true
	server.DeschedulingInterval = time.Millisecond // cycle after cycle, until two in a row evict the same pods
	server.PolicyConfigFile = os.Args[2]
	policy, err := descheduler.LoadPolicyConfig(os.Args[2], client, pluginregistry.PluginRegistry)
	if err != nil {
		fail(err)
	}
	if err := descheduler.RunDeschedulerStrategies(ctx, server, policy, "policy/v1"); err != nil {
		fail(err)
	}
	klog.Flush()

	cpu, rss := resourceUsage()
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if path := os.Getenv("SNAPSHOTCYCLE_EVICTED"); path != "" && len(counter.cycles) > 0 {
		writeLines(path, counter.cycles[len(counter.cycles)-1].pods)
	}
	out, _ := json.Marshal(map[string]any{
		"cycles":      counter.cycles,
		"seconds":     time.Since(started).Seconds(),
		"cpu_seconds": cpu,
		"max_rss_mib": rss,
	})
	fmt.Println(string(out))
}

// readSnapshot decodes a snapshot file as the plan module reads it: a JSON List (kind List, items) or a JSON array
// of objects. Kinds client-go's scheme does not know are skipped (the descheduler does not read them either).
func readSnapshot(path string) ([]runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if strings.HasPrefix(strings.TrimSpace(string(data[:min(len(data), 64)])), "[") {
		err = json.Unmarshal(data, &items)
	} else {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		err = json.Unmarshal(data, &list)
		items = list.Items
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	decoder := scheme.Codecs.UniversalDeserializer()
	objects := make([]runtime.Object, 0, len(items))
	skipped := map[string]int{}
	for _, raw := range items {
		object, kind, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			if kind != nil {
				skipped[kind.Kind]++
				continue
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, object)
	}
	for kind, count := range skipped {
		fmt.Fprintf(os.Stderr, "skipped %d %s object(s): not in client-go's scheme\n", count, kind)
	}
	return objects, nil
}

// resourceUsage is this process's CPU seconds (user + system) and peak RSS (MiB) so far.
func resourceUsage() (float64, float64) {
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	return cpu.Seconds(), float64(usage.Maxrss) / 1024 // kilobytes on Linux
}

// writeLines writes the keys, sorted, one per line.
func writeLines(path string, keys map[string]struct{}) {
	lines := make([]string, 0, len(keys))
	for key := range keys {
		lines = append(lines, key)
	}
	sort.Strings(lines)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "snapshotcycle:", err)
	os.Exit(1)
}
