package fare

import (
	"slices"

	"github.com/fared/fared/spf"
)

// Capacity engine.
//
// cap(X→D) = Σ over X's DAG children M on a path to D of min(bw(X,M), cap(M→D)),
// cap(D→D) = ∞. Only cap(N→D) for Self's first hops N is needed.
//
// Destinations with the same DAG parent list have the same ancestor sub-DAG;
// only the bandwidths of their own parent edges differ. Such a class is
// compiled once into a small program whose inputs are those bandwidths:
//
//   - units are the inputs (one per parent edge of D) and the ancestors of D
//     (Self excluded: its capacity is not needed for weights);
//   - a term (src→dst, threshold t) adds min(t, value(src)) to value(dst);
//     inputs feed D's parents with threshold +Inf;
//   - series reduction: an ancestor that is not a first hop and has a single
//     incoming term (s, a) is removed, and each of its outgoing terms (→P, b)
//     becomes (s→P, min(a, b)). In a 5-stage fabric the remote spine and
//     super-spine layers disappear this way;
//   - the remaining terms are grouped per (src, dst) into f(c) = Σ min(t_j, c),
//     stored as sorted thresholds with prefix sums, evaluated by binary search.
//
// A 5-stage remote-pod destination then costs 16 group evaluations instead
// of a 2,000-edge walk; the compile cost is paid once per pod.

type program struct {
	parents []int32 // class key: the DAG parent list shared by the class
	inputs  []int32 // positions (within D's parent edges) that are inputs
	units   int
	// groups in evaluation order
	gSrc, gDst, gOff, gLen []int32
	gUnk                   []bool
	thr, pre               []float64 // thresholds; prefix sums (gLen+1 per group, at gOff+index(g))
	gPre                   []int32
	// fhUnit is aligned with FirstHops(D) with D itself removed.
	fhUnit []int32
	// scratch for evaluation
	val []float64
	unk []bool
}

// capCalc computes and memoises cap(N→D) per advertiser D.
type capCalc struct {
	r       *spf.Result
	edgeBW  []float64
	edgeUnk []bool

	progs  []*program
	byHash map[uint64][]int32

	// scratch for compiling (indexed by node; reset after each compile)
	slotOf []int32

	// per destination memo, aligned with r.FirstHops(D)
	destOff []int32 // node → offset into capv, -1 if not computed
	capv    []float64
	capUnk  []bool
}

func newCapCalc(r *spf.Result, edgeBW []float64, edgeUnk []bool) *capCalc {
	n := len(r.Dist)
	c := &capCalc{r: r, edgeBW: edgeBW, edgeUnk: edgeUnk, byHash: map[uint64][]int32{}}
	c.slotOf = make([]int32, n)
	c.destOff = make([]int32, n)
	for i := range c.slotOf {
		c.slotOf[i] = -1
		c.destOff[i] = -1
	}
	return c
}

// caps returns cap(N→D) and its unknown flag for every N in r.FirstHops(d).
func (c *capCalc) caps(d int32) ([]float64, []bool) {
	r := c.r
	fh := r.FirstHops(d)
	if off := c.destOff[d]; off >= 0 {
		return c.capv[off : int(off)+len(fh)], c.capUnk[off : int(off)+len(fh)]
	}
	off := len(c.capv)
	c.destOff[d] = int32(off)
	for range fh {
		c.capv = append(c.capv, 0)
		c.capUnk = append(c.capUnk, false)
	}
	cv, cu := c.capv[off:], c.capUnk[off:]
	// Only D itself among the first hops (a direct neighbour reached no
	// other way): no program needed.
	if len(fh) == 1 && fh[0] == d {
		cv[0] = inf
		return cv, cu
	}
	p := c.program(d)
	lo := r.ParentStart[d]
	for i := range p.val {
		p.val[i], p.unk[i] = 0, false
	}
	for i, pos := range p.inputs {
		e := lo + pos
		p.val[i], p.unk[i] = c.edgeBW[e], c.edgeUnk[e]
	}
	thr, pre := p.thr, p.pre
	for gi, src := range p.gSrc {
		x := p.val[src]
		o, n := p.gOff[gi], p.gLen[gi]
		t := thr[o : o+n]
		// j = number of thresholds < x
		var j int32
		if n <= 8 {
			for j < n && t[j] < x {
				j++
			}
		} else {
			a, b := int32(0), n
			for a < b {
				m := (a + b) >> 1
				if t[m] < x {
					a = m + 1
				} else {
					b = m
				}
			}
			j = a
		}
		v := pre[p.gPre[gi]+j]
		if j < n {
			v += x * float64(n-j)
		}
		dst := p.gDst[gi]
		p.val[dst] += v
		if p.unk[src] || p.gUnk[gi] {
			p.unk[dst] = true
		}
	}
	k := 0
	for i, nb := range fh {
		if nb == d {
			cv[i] = inf
			continue
		}
		u := p.fhUnit[k]
		k++
		cv[i], cu[i] = p.val[u], p.unk[u]
	}
	return cv, cu
}

func hashParents(ps []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, p := range ps {
		h ^= uint64(uint32(p))
		h *= 1099511628211
	}
	return h
}

// program returns the compiled program of d's class.
func (c *capCalc) program(d int32) *program {
	r := c.r
	ps := r.EdgeParent[r.ParentStart[d]:r.ParentStart[d+1]]
	h := hashParents(ps)
	for _, i := range c.byHash[h] {
		if slices.Equal(c.progs[i].parents, ps) {
			return c.progs[i]
		}
	}
	p := c.compile(d)
	c.byHash[h] = append(c.byHash[h], int32(len(c.progs)))
	c.progs = append(c.progs, p)
	return p
}

// term of the reduction graph.
type term struct {
	src, dst int32
	thr      float64
	unk      bool
	alive    bool
	next     int32 // next out-term of src, -1
}

func (c *capCalc) compile(d int32) *program {
	r := c.r
	self := r.Self
	lo, hi := r.ParentStart[d], r.ParentStart[d+1]
	p := &program{parents: r.EdgeParent[lo:hi]}

	// Inputs: D's parent edges other than Self's.
	for e := lo; e < hi; e++ {
		if r.EdgeParent[e] != self {
			p.inputs = append(p.inputs, e-lo)
		}
	}
	k := int32(len(p.inputs))

	// Ancestors (Self excluded), numbered as units k, k+1, ...
	var nodes []int32
	var pending []int32
	add := func(x int32) int32 {
		s := c.slotOf[x]
		if s < 0 {
			s = int32(len(nodes))
			c.slotOf[x] = s
			nodes = append(nodes, x)
			pending = append(pending, 0)
		}
		return s
	}
	for _, pos := range p.inputs {
		s := add(r.EdgeParent[lo+pos])
		pending[s]++
	}
	for i := 0; i < len(nodes); i++ {
		m := nodes[i]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			if q := r.EdgeParent[e]; q != self {
				pending[add(q)]++
			}
		}
	}
	// Kahn order, children first.
	for _, pos := range p.inputs {
		pending[c.slotOf[r.EdgeParent[lo+pos]]]--
	}
	order := make([]int32, 0, len(nodes))
	for s := range nodes {
		if pending[s] == 0 {
			order = append(order, int32(s))
		}
	}
	for i := 0; i < len(order); i++ {
		m := nodes[order[i]]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			if q := r.EdgeParent[e]; q != self {
				s := c.slotOf[q]
				pending[s]--
				if pending[s] == 0 {
					order = append(order, s)
				}
			}
		}
	}

	// First hops (D excluded) must survive the reduction.
	nu := int(k) + len(nodes)
	isFH := make([]bool, nu)
	for _, nb := range r.FirstHops(d) {
		if nb != d {
			isFH[k+c.slotOf[nb]] = true
		}
	}

	// Reduction graph.
	terms := make([]term, 0, len(nodes)*2+int(k))
	head := make([]int32, nu)
	for i := range head {
		head[i] = -1
	}
	inCount := make([]int32, nu)
	inTerm := make([]int32, nu)
	push := func(t term) int32 {
		t.alive = true
		t.next = head[t.src]
		i := int32(len(terms))
		terms = append(terms, t)
		head[t.src] = i
		inCount[t.dst]++
		inTerm[t.dst] = i
		return i
	}
	for i, pos := range p.inputs {
		push(term{src: int32(i), dst: k + c.slotOf[r.EdgeParent[lo+pos]], thr: inf})
	}
	for _, s := range order {
		m := nodes[s]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			if q := r.EdgeParent[e]; q != self {
				push(term{src: k + s, dst: k + c.slotOf[q], thr: c.edgeBW[e], unk: c.edgeUnk[e]})
			}
		}
	}
	gone := make([]bool, nu)
	for _, s := range order {
		u := k + s
		if isFH[u] || inCount[u] != 1 {
			continue
		}
		ti := inTerm[u]
		in := terms[ti]
		for oi := head[u]; oi >= 0; oi = terms[oi].next {
			o := terms[oi]
			if !o.alive {
				continue
			}
			terms[oi].alive = false
			inCount[o.dst]-- // push adds it back
			push(term{src: in.src, dst: o.dst, thr: min(in.thr, o.thr), unk: in.unk || o.unk})
		}
		terms[ti].alive = false
		gone[u] = true
	}

	// Dense renumbering of the surviving units: inputs, then survivors in
	// Kahn order (which is also the evaluation order of their groups).
	dense := make([]int32, nu)
	seq := make([]int32, 0, nu)
	for i := int32(0); i < k; i++ {
		dense[i] = int32(len(seq))
		seq = append(seq, i)
	}
	for _, s := range order {
		if u := k + s; !gone[u] {
			dense[u] = int32(len(seq))
			seq = append(seq, u)
		}
	}
	p.units = len(seq)
	var buf []term
	for _, u := range seq {
		buf = buf[:0]
		for oi := head[u]; oi >= 0; oi = terms[oi].next {
			if terms[oi].alive {
				buf = append(buf, terms[oi])
			}
		}
		slices.SortFunc(buf, func(a, b term) int {
			if a.dst != b.dst {
				return int(a.dst - b.dst)
			}
			switch {
			case a.thr < b.thr:
				return -1
			case a.thr > b.thr:
				return 1
			}
			return 0
		})
		for i := 0; i < len(buf); {
			j := i
			unk := false
			off := int32(len(p.thr))
			pre := int32(len(p.pre))
			sum := 0.0
			p.pre = append(p.pre, 0)
			for j < len(buf) && buf[j].dst == buf[i].dst {
				p.thr = append(p.thr, buf[j].thr)
				sum += buf[j].thr
				p.pre = append(p.pre, sum)
				unk = unk || buf[j].unk
				j++
			}
			p.gSrc = append(p.gSrc, dense[u])
			p.gDst = append(p.gDst, dense[buf[i].dst])
			p.gOff = append(p.gOff, off)
			p.gLen = append(p.gLen, int32(j-i))
			p.gPre = append(p.gPre, pre)
			p.gUnk = append(p.gUnk, unk)
			i = j
		}
	}
	for _, nb := range r.FirstHops(d) {
		if nb != d {
			p.fhUnit = append(p.fhUnit, dense[k+c.slotOf[nb]])
		}
	}
	p.val = make([]float64, p.units)
	p.unk = make([]bool, p.units)
	for _, x := range nodes {
		c.slotOf[x] = -1
	}
	return p
}

// capToward computes cap(X→d) for every ancestor X of d including Self with
// a plain reverse walk (used for re-advertisement, where Self's capacity is
// wanted). It returns cap(Self→d).
func capToward(r *spf.Result, edgeBW []float64, d int32) float64 {
	if d == r.Self {
		return inf
	}
	if !r.Reachable(d) {
		return 0
	}
	n := len(r.Dist)
	capv := make([]float64, n)
	pending := make([]int32, n)
	seen := make([]bool, n)
	queue := []int32{d}
	seen[d] = true
	for i := 0; i < len(queue); i++ {
		m := queue[i]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			q := r.EdgeParent[e]
			pending[q]++
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	capv[d] = inf
	ready := []int32{d}
	for i := 0; i < len(ready); i++ {
		m := ready[i]
		cm := capv[m]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			q := r.EdgeParent[e]
			capv[q] += min(edgeBW[e], cm)
			pending[q]--
			if pending[q] == 0 {
				ready = append(ready, q)
			}
		}
	}
	return capv[r.Self]
}
