package sim

import (
	"sort"
	"time"

	"github.com/fared/fared/qos/model"
)

// depthHist is a time-weighted histogram of one queue's depth: every
// change of depth adds the time spent at the old depth, so percentiles
// and the mean are exact over time, not over samples.
type depthHist struct {
	last     time.Duration
	bins     []int64 // ns spent per bucket; bucket 0 is an empty queue
	integral float64 // byte·ns
	max      int64
}

func (p *Port) histNote(q int) {
	h := p.hist[q]
	now := p.Node.net.now
	if h == nil {
		h = &depthHist{}
		p.hist[q] = h
	}
	h.add(now-h.last, p.qBytes[q], int64(p.Node.net.P.HistBucket))
	h.last = now
}

func (h *depthHist) add(dt time.Duration, depth, bucket int64) {
	if dt <= 0 {
		if depth > h.max {
			h.max = depth
		}
		return
	}
	b := int64(0)
	if depth > 0 {
		b = (depth-1)/bucket + 1
	}
	for int64(len(h.bins)) <= b {
		h.bins = append(h.bins, 0)
	}
	h.bins[b] += int64(dt)
	h.integral += float64(depth) * float64(dt)
	if depth > h.max {
		h.max = depth
	}
}

// DepthStats summarises a queue's depth over time, in bytes.
type DepthStats struct {
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P99  int64   `json:"p99"`
	Max  int64   `json:"max"`
}

// ResetStats starts the measurement window now: port counters, depth
// histograms and flow loss counts start again from zero (queues, flows
// and their state are untouched). A warm-up is run, then ResetStats,
// then the measured interval.
func (n *Network) ResetStats() {
	n.statsStart = n.now
	n.Drops = map[string]uint64{}
	n.CNPs = map[string]uint64{}
	for _, nd := range n.Nodes {
		for _, p := range nd.Ports {
			p.C = [model.NumPrio]QueueStats{}
			for q := range p.hist {
				if p.hist[q] != nil {
					p.hist[q] = &depthHist{last: n.now, max: p.qBytes[q]}
				}
			}
		}
	}
}

// Depth returns queue q's depth statistics over the measurement window
// (from time 0 or the last ResetStats to now). A
// percentile is the upper edge of its histogram bucket (Params.HistBucket
// bytes wide; an empty queue counts as 0).
func (p *Port) Depth(q int) DepthStats {
	now := p.Node.net.now
	span := now - p.Node.net.statsStart
	h := p.hist[q]
	if h == nil || span <= 0 {
		return DepthStats{}
	}
	c := depthHist{bins: append([]int64(nil), h.bins...), integral: h.integral, max: h.max}
	bucket := int64(p.Node.net.P.HistBucket)
	c.add(now-h.last, p.qBytes[q], bucket)
	pct := func(f float64) int64 {
		want := int64(f * float64(span))
		var acc int64
		for b, w := range c.bins {
			acc += w
			if acc >= want && acc > 0 {
				return int64(b) * bucket
			}
		}
		return int64(len(c.bins)-1) * bucket
	}
	return DepthStats{Mean: c.integral / float64(span), P50: pct(0.5), P99: pct(0.99), Max: c.max}
}

// QueueResult is one busy queue's figures.
type QueueResult struct {
	Prio     int        `json:"prio"`
	TxBytes  uint64     `json:"tx_bytes"`
	Depth    DepthStats `json:"depth_bytes"`
	Marks    uint64     `json:"ecn_marks"`
	Drops    uint64     `json:"drops"`
	PauseTx  uint64     `json:"pause_tx"`
	PauseRx  uint64     `json:"pause_rx"`
	Remapped uint64     `json:"remapped"`
}

// PortResult is one port's figures.
type PortResult struct {
	Node     string        `json:"node"`
	Port     string        `json:"port"`
	RateGbps float64       `json:"rate_gbps"`
	TxBytes  uint64        `json:"tx_bytes"`
	Gbps     float64       `json:"throughput_gbps"`
	Util     float64       `json:"utilisation"`
	PauseTx  uint64        `json:"pause_tx"`
	PauseRx  uint64        `json:"pause_rx"`
	Drops    uint64        `json:"drops"`
	Marks    uint64        `json:"ecn_marks"`
	Queues   []QueueResult `json:"queues,omitempty"`
}

// FCTStats summarises flow completion times of one class of flows.
type FCTStats struct {
	Flows int           `json:"flows"`
	Done  int           `json:"done"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// FlowResult is one flow's outcome.
type FlowResult struct {
	Name      string        `json:"name"`
	Src       string        `json:"src"`
	Dst       string        `json:"dst"`
	Size      int64         `json:"size"`
	Delivered int64         `json:"delivered"`
	Done      bool          `json:"done"`
	FCT       time.Duration `json:"fct_ns,omitempty"`
	Gbps      float64       `json:"goodput_gbps"`
	CNPs      uint64        `json:"cnps_rx"`
	Lost      uint64        `json:"lost_packets"`
}

// Results are a run's metrics.
type Results struct {
	Duration  time.Duration     `json:"duration_ns"`
	Events    uint64            `json:"events"`
	Ports     []PortResult      `json:"ports"`
	Mice      FCTStats          `json:"fct_mice"`
	Elephants FCTStats          `json:"fct_elephants"`
	Flows     []FlowResult      `json:"flows"`
	Drops     map[string]uint64 `json:"drops"`
	CNPs      map[string]uint64 `json:"cnps"`
	PauseTx   uint64            `json:"pause_frames_tx"`
	PauseRx   uint64            `json:"pause_frames_rx"`
}

// Collect gathers the metrics at the current time. Flows of at least
// split bytes are elephants for the FCT summary (0: 1 MB). Ports that
// sent nothing are left out.
func (n *Network) Collect(split int64) *Results {
	if split <= 0 {
		split = 1_000_000
	}
	r := &Results{Duration: n.now - n.statsStart, Events: n.Events, Drops: map[string]uint64{}, CNPs: map[string]uint64{}}
	for k, v := range n.Drops {
		r.Drops[k] = v
	}
	for k, v := range n.CNPs {
		r.CNPs[k] = v
	}
	secs := (n.now - n.statsStart).Seconds()
	for _, nd := range n.Nodes {
		for _, p := range nd.Ports {
			pr := PortResult{Node: nd.Name, Port: p.Name, RateGbps: p.Rate / 1e9}
			for q := 0; q < model.NumPrio; q++ {
				c := p.C[q]
				pr.TxBytes += c.TxBytes
				pr.PauseTx += c.PauseTx
				pr.PauseRx += c.PauseRx
				pr.Drops += c.Drops
				pr.Marks += c.Marks
				if c.EnqPackets == 0 && c.PauseTx == 0 && c.PauseRx == 0 && c.Drops == 0 && c.Remapped == 0 {
					continue
				}
				pr.Queues = append(pr.Queues, QueueResult{Prio: q, TxBytes: c.TxBytes, Depth: p.Depth(q), Marks: c.Marks,
					Drops: c.Drops, PauseTx: c.PauseTx, PauseRx: c.PauseRx, Remapped: c.Remapped})
			}
			r.PauseTx += pr.PauseTx
			r.PauseRx += pr.PauseRx
			if secs > 0 {
				pr.Gbps = float64(pr.TxBytes) * 8 / secs / 1e9
				pr.Util = float64(pr.TxBytes) * 8 / secs / p.Rate
			}
			if pr.TxBytes > 0 || pr.PauseRx > 0 || pr.PauseTx > 0 || pr.Drops > 0 {
				r.Ports = append(r.Ports, pr)
			}
		}
	}
	var mice, eleph []time.Duration
	for _, f := range n.Flows {
		fr := FlowResult{Name: f.Name, Src: f.Src.Name, Dst: f.Dst.Name, Size: f.Size, Delivered: f.Delivered,
			Done: f.Done, CNPs: f.CNPsRx, Lost: f.Lost}
		end := n.now
		if f.Done {
			fr.FCT = f.FCT()
			end = f.Finish
		}
		if d := end - f.Start; d > 0 {
			fr.Gbps = float64(f.Delivered) * 8 / d.Seconds() / 1e9
		}
		r.Flows = append(r.Flows, fr)
		if f.Size <= 0 {
			continue
		}
		if f.Size >= split {
			r.Elephants.Flows++
			if f.Done {
				eleph = append(eleph, f.FCT())
			}
		} else {
			r.Mice.Flows++
			if f.Done {
				mice = append(mice, f.FCT())
			}
		}
	}
	fill(&r.Mice, mice)
	fill(&r.Elephants, eleph)
	return r
}

func fill(s *FCTStats, d []time.Duration) {
	s.Done = len(d)
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	s.Mean = sum / time.Duration(len(d))
	s.P50 = d[(len(d)-1)/2]
	s.P99 = d[min(len(d)-1, int(float64(len(d))*0.99))]
	s.Max = d[len(d)-1]
}
