// Package scenario reads qos-sim scenario files (docs/qos.md): a fabric
// of switches and hosts, their links, static routes (a routing loop is
// allowed), flows, and the qos section each switch runs. Run builds the
// network, puts fared's QoS policies (policy.Controller) on every switch
// through the sim's model.Backend, runs it, and returns the metrics.
package scenario

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fared/fared/config"
	"github.com/fared/fared/qos/model"
	"github.com/fared/fared/qos/qosconfig"
	"github.com/fared/fared/qos/sim"
)

// Scenario is a parsed scenario file.
type Scenario struct {
	Name     string
	Duration time.Duration
	Params   sim.Params
	MTU      int
	// Split: flows of at least this many bytes are elephants in the FCT
	// summary.
	Split    int64
	Defaults Link
	Buffer   int64
	Lossy    int64
	HostPFC  *model.Prios // priorities hosts honour PAUSE on (default: qos pfc)
	Switches []Switch
	Hosts    []string
	Links    []Link
	Routes   []Route
	Flows    []Flow
}

// Switch is one switch and the qos section it runs.
type Switch struct {
	Name   string
	Buffer int64
	QoS    *qosconfig.Config // nil: no qos (tail drop, no PFC)
	Line   int
	qosKey *yaml.Node
	qosVal *yaml.Node
}

// Link is one link (rate in bits/s).
type Link struct {
	A, B  string
	Rate  float64
	Delay time.Duration
	Line  int
}

// Route is a static route: node sends packets for dst via the ports
// toward the named neighbours.
type Route struct {
	Node, Dst string
	Via       []string
	Line      int
}

// Flow is one entry of flows (Count copies, Gap apart).
type Flow struct {
	Name     string
	Src, Dst string
	DSCP     uint8
	Size     int64
	Start    time.Duration
	Stop     time.Duration
	CC       sim.CC
	ECT      bool
	Rate     float64
	MTU      int
	Count    int
	Gap      time.Duration
	Line     int
}

// Load reads and checks a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses scenario YAML; file names errors (file:line).
func Parse(file string, data []byte) (*Scenario, error) {
	w := &config.Walker{File: file}
	root := w.Document(data)
	if root == nil {
		return nil, w.Err()
	}
	s := &Scenario{Params: sim.DefaultParams(), MTU: 1000, Duration: 10 * time.Millisecond,
		Defaults: Link{Rate: 100e9, Delay: time.Microsecond}, Buffer: 12 << 20, Lossy: 1 << 20}
	if !w.Want(&yaml.Node{Value: "scenario"}, root, "a mapping", root.Kind == yaml.MappingNode) {
		return nil, w.Err()
	}
	var qosKey, qosVal *yaml.Node
	var hostPFCNode *yaml.Node
	seen := w.Mapping(root, map[string]config.Field{
		"name":     w.Str(&s.Name, nil),
		"seed":     config.SetInt(w, &s.Params.Seed, 0, 1<<62),
		"duration": w.SetDuration(&s.Duration, time.Microsecond, time.Hour),
		"mtu":      config.SetInt(w, &s.MTU, 64, 9216),
		"split":    bytesField(w, &s.Split),
		"params":   s.params(w),
		"dcqcn":    s.dcqcn(w),
		"dctcp":    s.dctcp(w),
		"defaults": s.defaults(w),
		"host-pfc": func(k, v *yaml.Node) { hostPFCNode = v },
		"qos":      func(k, v *yaml.Node) { qosKey, qosVal = k, v },
		"hosts":    func(k, v *yaml.Node) { s.Hosts, _ = w.Strings(k, v) },
		"switches": s.switches(w),
		"links":    w.List(s.link(w)),
		"routes":   w.List(s.route(w)),
		"flows":    w.List(s.flow(w)),
	})
	for _, key := range []string{"switches", "links"} {
		if seen[key] == nil {
			w.Errf(root, "missing required key %q", key)
		}
	}
	s.check(w)
	s.qos(w, qosKey, qosVal)
	if hostPFCNode != nil {
		s.hostPFC(w, hostPFCNode)
	}
	if err := w.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Scenario) defaults(w *config.Walker) config.Field {
	return section(w, map[string]config.Field{
		"rate":        rateField(w, &s.Defaults.Rate),
		"delay":       w.SetDuration(&s.Defaults.Delay, 0, time.Second),
		"buffer":      bytesField(w, &s.Buffer),
		"lossy-limit": bytesField(w, &s.Lossy),
	})
}

// switches parses the switches: each a name, or a mapping with its own
// buffer and qos section.
func (s *Scenario) switches(w *config.Walker) config.Field {
	return func(k, v *yaml.Node) {
		if !w.Want(k, v, "a list", v.Kind == yaml.SequenceNode) {
			return
		}
		for _, it := range v.Content {
			it = config.Deref(it)
			sw := Switch{Line: it.Line}
			if it.Kind == yaml.ScalarNode {
				sw.Name = it.Value
			} else if w.Want(k, it, "a name or a mapping", it.Kind == yaml.MappingNode) {
				w.Mapping(it, map[string]config.Field{
					"name":   w.Str(&sw.Name, nil),
					"buffer": bytesField(w, &sw.Buffer),
					"qos":    func(k, v *yaml.Node) { sw.qosKey, sw.qosVal = k, v },
				})
			}
			s.Switches = append(s.Switches, sw)
		}
	}
}

func (s *Scenario) link(w *config.Walker) func(v *yaml.Node) {
	return func(v *yaml.Node) {
		l := Link{Rate: -1, Delay: -1, Line: v.Line}
		w.Mapping(v, map[string]config.Field{
			"a":     w.Str(&l.A, nil),
			"b":     w.Str(&l.B, nil),
			"rate":  rateField(w, &l.Rate),
			"delay": w.SetDuration(&l.Delay, 0, time.Second),
		})
		s.Links = append(s.Links, l)
	}
}

func (s *Scenario) route(w *config.Walker) func(v *yaml.Node) {
	return func(v *yaml.Node) {
		r := Route{Line: v.Line}
		w.Mapping(v, map[string]config.Field{
			"node": w.Str(&r.Node, nil),
			"dst":  w.Str(&r.Dst, nil),
			"via": func(k, v *yaml.Node) {
				if v.Kind == yaml.ScalarNode {
					r.Via = []string{v.Value}
					return
				}
				r.Via, _ = w.Strings(k, v)
			},
		})
		s.Routes = append(s.Routes, r)
	}
}

func (s *Scenario) flow(w *config.Walker) func(v *yaml.Node) {
	return func(v *yaml.Node) {
		f := Flow{CC: sim.CCNone, ECT: true, Count: 1, Line: v.Line}
		var cc string
		w.Mapping(v, map[string]config.Field{
			"name":     w.Str(&f.Name, nil),
			"src":      w.Str(&f.Src, nil),
			"dst":      w.Str(&f.Dst, nil),
			"dscp":     config.SetInt(w, &f.DSCP, 0, 63),
			"size":     bytesField(w, &f.Size),
			"start":    w.SetDuration(&f.Start, 0, time.Hour),
			"stop":     w.SetDuration(&f.Stop, 0, time.Hour),
			"cc":       w.OneOf(&cc, "none", "dcqcn", "dctcp"),
			"ect":      w.Bool(&f.ECT),
			"rate":     rateField(w, &f.Rate),
			"mtu":      config.SetInt(w, &f.MTU, 64, 9216),
			"count":    config.SetInt(w, &f.Count, 1, 100000),
			"interval": w.SetDuration(&f.Gap, 0, time.Hour),
		})
		if cc != "" {
			f.CC = sim.CC(cc)
		}
		if f.Size == 0 && f.Stop == 0 {
			w.Errf(v, "flow: needs a size or a stop time")
		}
		s.Flows = append(s.Flows, f)
	}
}

// qos parses the qos sections: each switch's own, else the top-level one
// (k, v; nil if none), with interfaces defaulting to all of the switch's
// ports.
func (s *Scenario) qos(w *config.Walker, top, topVal *yaml.Node) {
	for i := range s.Switches {
		sw := &s.Switches[i]
		k, v := sw.qosKey, sw.qosVal
		if k == nil {
			k, v = top, topVal
		}
		if k == nil {
			continue
		}
		sw.QoS = qosconfig.ParseFor(w, k, v, s.Ports(sw.Name))
		if sw.QoS != nil {
			for _, f := range sw.QoS.Ifaces {
				if !contains(s.Ports(sw.Name), f.Name) {
					w.Errf(&yaml.Node{Line: f.Line}, "switch %s: qos interface %s: no such port (ports are named after the peer: %v)", sw.Name, f.Name, s.Ports(sw.Name))
				}
			}
		}
	}
}

// hostPFC parses host-pfc, the priorities hosts honour PAUSE on.
func (s *Scenario) hostPFC(w *config.Walker, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		w.Errf(v, "host-pfc: expected a list of priorities")
		return
	}
	var pr model.Prios
	for _, it := range v.Content {
		n, good := w.Integer(&yaml.Node{Value: "host-pfc"}, it, 0, model.NumPrio-1)
		if good {
			pr |= 1 << n
		}
	}
	s.HostPFC = &pr
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Ports lists a node's port names as sim.Connect names them.
func (s *Scenario) Ports(node string) []string {
	var out []string
	seen := map[string]int{}
	for _, l := range s.Links {
		var peer string
		switch node {
		case l.A:
			peer = l.B
		case l.B:
			peer = l.A
		default:
			continue
		}
		seen[peer]++
		name := peer
		if k := seen[peer]; k > 1 {
			name = peer + "-" + strconv.Itoa(k)
		}
		out = append(out, name)
	}
	return out
}

func (s *Scenario) check(w *config.Walker) {
	nodes := map[string]string{}
	at := func(line int) *yaml.Node { return &yaml.Node{Line: line} }
	for _, sw := range s.Switches {
		if sw.Name == "" {
			w.Errf(at(sw.Line), "switch: missing name")
			continue
		}
		if _, dup := nodes[sw.Name]; dup {
			w.Errf(at(sw.Line), "node %s: defined twice", sw.Name)
		}
		nodes[sw.Name] = "switch"
	}
	for _, h := range s.Hosts {
		if _, dup := nodes[h]; dup {
			w.Errf(at(1), "node %s: defined twice", h)
		}
		nodes[h] = "host"
	}
	for _, l := range s.Links {
		for _, n := range []string{l.A, l.B} {
			if nodes[n] == "" {
				w.Errf(at(l.Line), "link: unknown node %q", n)
			}
		}
		if l.A == l.B {
			w.Errf(at(l.Line), "link: %s to itself", l.A)
		}
	}
	for _, r := range s.Routes {
		if nodes[r.Node] != "switch" {
			w.Errf(at(r.Line), "route: %q is not a switch", r.Node)
		}
		if nodes[r.Dst] == "" {
			w.Errf(at(r.Line), "route: unknown destination %q", r.Dst)
		}
		for _, v := range r.Via {
			if !contains(s.Ports(r.Node), v) {
				w.Errf(at(r.Line), "route: %s has no port toward %q", r.Node, v)
			}
		}
	}
	for _, f := range s.Flows {
		if nodes[f.Src] != "host" || nodes[f.Dst] != "host" {
			w.Errf(at(f.Line), "flow: src and dst must be hosts (got %q, %q)", f.Src, f.Dst)
		}
	}
}

func bytesField(w *config.Walker, dst *int64) config.Field {
	return func(k, v *yaml.Node) {
		s, ok := w.Text(k, v)
		if !ok {
			return
		}
		n, err := qosconfig.Bytes(s)
		if err != nil {
			w.Errf(v, "%s: %v", k.Value, err)
			return
		}
		*dst = int64(n)
	}
}

func rateField(w *config.Walker, dst *float64) config.Field {
	var b config.Bandwidth
	f := w.Bandwidth(&b)
	return func(k, v *yaml.Node) {
		b = 0
		f(k, v)
		if b > 0 {
			*dst = float64(b)
		}
	}
}

func (s *Scenario) params(w *config.Walker) config.Field {
	p := &s.Params
	return func(k, v *yaml.Node) {
		if !w.IsMapping(k, v) {
			return
		}
		var cnpSize, ackSize, hostQ, hist int64 = int64(p.CNPSize), int64(p.AckSize), int64(p.HostQueue), int64(p.HistBucket)
		w.Mapping(v, map[string]config.Field{
			"pause-quanta": config.SetInt(w, &p.PauseQuanta, 1, 0xFFFF),
			"cnp-interval": w.SetDuration(&p.CNPInterval, 0, time.Second),
			"cnp-dscp":     config.SetInt(w, &p.CNPDSCP, 0, 63),
			"cnp-size":     bytesField(w, &cnpSize),
			"ack-size":     bytesField(w, &ackSize),
			"host-queue":   bytesField(w, &hostQ),
			"hist-bucket":  bytesField(w, &hist),
			"ttl":          config.SetInt(w, &p.TTL, 1, 255),
		})
		p.CNPSize, p.AckSize, p.HostQueue, p.HistBucket = int(cnpSize), int(ackSize), int(hostQ), max(int(hist), 1)
	}
}

// section is a field holding a mapping of fields.
func section(w *config.Walker, fields map[string]config.Field) config.Field {
	return func(k, v *yaml.Node) {
		if w.IsMapping(k, v) {
			w.Mapping(v, fields)
		}
	}
}

func floatField(w *config.Walker, dst *float64) config.Field {
	return func(k, v *yaml.Node) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if !w.Want(k, v, "a number", v.Kind == yaml.ScalarNode && err == nil) {
			return
		}
		if f < 0 || f > 1 {
			w.Errf(v, "%s: %g out of range 0..1", k.Value, f)
			return
		}
		*dst = f
	}
}

func (s *Scenario) dcqcn(w *config.Walker) config.Field {
	p := &s.Params.DCQCN
	return section(w, map[string]config.Field{
		"g":            floatField(w, &p.G),
		"alpha-timer":  w.SetDuration(&p.AlphaTimer, time.Microsecond, time.Second),
		"rate-timer":   w.SetDuration(&p.RateTimer, time.Microsecond, time.Second),
		"byte-counter": bytesField(w, &p.ByteCounter),
		"f":            config.SetInt(w, &p.F, 1, 100),
		"rai":          rateField(w, &p.RAI),
		"rhai":         rateField(w, &p.RHAI),
		"min-rate":     rateField(w, &p.MinRate),
		"rto":          w.SetDuration(&p.RTO, time.Microsecond, time.Minute),
		"ack-every":    bytesField(w, &p.AckEvery),
	})
}

func (s *Scenario) dctcp(w *config.Walker) config.Field {
	p := &s.Params.DCTCP
	return section(w, map[string]config.Field{
		"g":         floatField(w, &p.G),
		"init-cwnd": config.SetInt(w, &p.InitCwnd, 1, 1000),
		"rto":       w.SetDuration(&p.RTO, time.Microsecond, time.Minute),
	})
}

// Build creates the network. Hosts honour PAUSE on HostPFC (default: the
// pfc priorities of the first switch's qos) and classify their own
// packets with that qos's DSCP map.
func (s *Scenario) Build() (*sim.Network, error) {
	n := sim.New(s.Params)
	for _, sw := range s.Switches {
		nd := n.AddNode(sw.Name, false)
		nd.Buffer = s.Buffer
		if sw.Buffer > 0 {
			nd.Buffer = sw.Buffer
		}
		nd.LossyLimit = s.Lossy
	}
	for _, h := range s.Hosts {
		n.AddNode(h, true)
	}
	for _, l := range s.Links {
		rate, delay := l.Rate, l.Delay
		if rate < 0 {
			rate = s.Defaults.Rate
		}
		if delay < 0 {
			delay = s.Defaults.Delay
		}
		n.Connect(n.Node(l.A), n.Node(l.B), rate, delay)
	}
	var base *qosconfig.Config
	for _, sw := range s.Switches {
		if sw.QoS != nil {
			base = sw.QoS
			break
		}
	}
	hostPFC := model.Prios(0)
	if base != nil {
		hostPFC = base.PFC.Prios
	}
	if s.HostPFC != nil {
		hostPFC = *s.HostPFC
	}
	for _, h := range s.Hosts {
		nd := n.Node(h)
		if base != nil {
			nd.DSCP = base.Desired().DSCP
		}
		for _, p := range nd.Ports {
			p.PFC = hostPFC
		}
	}
	for _, r := range s.Routes {
		nd := n.Node(r.Node)
		var via []*sim.Port
		for _, v := range r.Via {
			via = append(via, nd.Port(v))
		}
		nd.SetRoute(n.Node(r.Dst), via...)
	}
	n.Route()
	for _, f := range s.Flows {
		for i := 0; i < f.Count; i++ {
			name := f.Name
			if name == "" {
				name = fmt.Sprintf("%s-%s", f.Src, f.Dst)
			}
			if f.Count > 1 {
				name = fmt.Sprintf("%s#%d", name, i)
			}
			mtu := f.MTU
			if mtu == 0 {
				mtu = s.MTU
			}
			start := f.Start + time.Duration(i)*f.Gap
			stop := f.Stop
			if stop > 0 && f.Gap > 0 {
				stop += time.Duration(i) * f.Gap
			}
			n.AddFlow(&sim.Flow{Name: name, Src: n.Node(f.Src), Dst: n.Node(f.Dst), Size: f.Size, Start: start, Stop: stop,
				DSCP: f.DSCP, ECT: f.ECT, CC: f.CC, MTU: mtu, LineRate: f.Rate})
		}
	}
	return n, nil
}
