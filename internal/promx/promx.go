// Package promx holds what the modules' Prometheus collectors share
// (docs/metrics.md): a collector that asks its module at scrape time,
// bounded by a timeout, and the emitters of a series per map key or per
// flag. igp.Collector, the IGPs' collector, is this one.
package promx

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ScrapeTimeout bounds a scrape's wait for a busy module loop: a loop
// that does not answer costs the scrape a ScrapeError metric, not a hang.
const ScrapeTimeout = 2 * time.Second

// Collector is a module's collector. Scrape runs at every scrape with a
// context of ScrapeTimeout; an error it returns (the module did not
// answer) becomes an invalid ScrapeError metric.
type Collector struct {
	Descs       []*prometheus.Desc // every metric it may emit, ScrapeError included
	ScrapeError *prometheus.Desc
	Scrape      func(ctx context.Context, ch chan<- prometheus.Metric) error
}

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.Descs {
		ch <- d
	}
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	if err := c.Scrape(ctx, ch); err != nil {
		ch <- prometheus.NewInvalidMetric(c.ScrapeError, err)
	}
}

// Number is what a count of a map emitted by ByKey may be.
type Number interface {
	~int | ~int64 | ~uint64 | ~float64
}

// ByKey emits one series of d per key of values, the key its only label,
// in key order so that the exposition is stable from scrape to scrape.
func ByKey[N Number](ch chan<- prometheus.Metric, d *prometheus.Desc, vt prometheus.ValueType, values map[string]N) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		ch <- prometheus.MustNewConstMetric(d, vt, float64(values[k]), k)
	}
}

// Flag is a gauge's value for a condition: 1 while it holds, else 0.
func Flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
