package igp

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fared/fared/internal/promx"
)

// ScrapeTimeout bounds a scrape's wait for a busy loop: a loop that does
// not answer costs its metrics, not the scrape.
const ScrapeTimeout = promx.ScrapeTimeout

// Collector is a module's Prometheus collector (docs/metrics.md). It asks
// the instance's loop at scrape time through the same queries as the API:
// the loop's state is never read from another goroutine, and the metrics
// always agree with farectl. The non-IGP modules use the same one.
type Collector = promx.Collector

// Counters emits an interface's counters (farectl's interface view), each
// under the metric file gives it, with the interface as first label.
func Counters(ch chan<- prometheus.Metric, iface string, counters map[string]uint64, file func(name string) (*prometheus.Desc, []string)) {
	names := make([]string, 0, len(counters))
	for k := range counters {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		d, labels := file(k)
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(counters[k]), append([]string{iface}, labels...)...)
	}
}

// Pairs emits a gauge per pair of label values (a level or area, and a
// state or type), in label order.
func Pairs(ch chan<- prometheus.Metric, d *prometheus.Desc, m map[[2]string]int) {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(m[k]), k[0], k[1])
	}
}
