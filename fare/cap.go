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
//     super-spine layers disappear this way. A first hop whose single
//     incoming term is (s, +Inf) is removed too and read as s (in a 3-stage
//     fabric every spine is then just its input: no work per destination);
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
	// direct: no groups, and every first hop's value is an input (D is not
	// a first hop); fhPos[j] is then the position among D's parent edges
	// of first hop j's input.
	direct bool
	fhPos  []int32
	// scratch for evaluation
	val []float64
	unk []bool
}

// capCalc computes and memoises cap(N→D) per advertiser D.
type capCalc struct {
	r       *spf.Result
	edgeBW  []float64
	edgeUnk []bool

	progs  []*program // progs[:nprogs] are in use; the rest are recycled
	nprogs int
	last   int // the program returned last, -1 if none: consecutive destinations often share it
	byHash map[uint64][]int32

	// scratch for compiling (slotOf is indexed by node, reset after each compile)
	slotOf []int32
	sc     scratch

	// per destination memo, aligned with r.FirstHops(D)
	destOff []int32 // node → offset into capv, -1 if not computed
	capv    []float64
	capUnk  []bool
}

// reset prepares c (possibly reused from an earlier Compute) for r.
func (c *capCalc) reset(r *spf.Result, edgeBW []float64, edgeUnk []bool) {
	n := len(r.Dist)
	c.r, c.edgeBW, c.edgeUnk = r, edgeBW, edgeUnk
	if c.byHash == nil {
		c.byHash = map[uint64][]int32{}
	}
	clear(c.byHash)
	c.nprogs = 0
	c.last = -1
	// slotOf is kept all -1 between compiles; a new size starts fresh.
	if len(c.slotOf) != n {
		c.slotOf = make([]int32, n)
		for i := range c.slotOf {
			c.slotOf[i] = -1
		}
	}
	c.destOff = grow(c.destOff, n)
	for i := range c.destOff {
		c.destOff[i] = -1
	}
	c.capv, c.capUnk = c.capv[:0], c.capUnk[:0]
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
	c.capv = slices.Grow(c.capv, len(fh))[:off+len(fh)]
	c.capUnk = slices.Grow(c.capUnk, len(fh))[:off+len(fh)]
	cv, cu := c.capv[off:], c.capUnk[off:]
	// Only D itself among the first hops (a direct neighbour reached no
	// other way): no program needed.
	if len(fh) == 1 && fh[0] == d {
		cv[0], cu[0] = inf, false
		return cv, cu
	}
	p := c.program(d)
	lo := r.ParentStart[d]
	if p.direct && len(p.fhPos) == len(fh) {
		// A 3-stage fabric: every value is an input.
		bw, unk := c.edgeBW, c.edgeUnk
		cv, cu = cv[:len(p.fhPos)], cu[:len(p.fhPos)]
		for i, pos := range p.fhPos {
			e := lo + pos
			cv[i], cu[i] = bw[e], unk[e]
		}
		return cv, cu
	}
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
			cv[i], cu[i] = inf, false
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
	if c.last >= 0 && slices.Equal(c.progs[c.last].parents, ps) {
		return c.progs[c.last]
	}
	h := hashParents(ps)
	for _, i := range c.byHash[h] {
		if slices.Equal(c.progs[i].parents, ps) {
			c.last = int(i)
			return c.progs[i]
		}
	}
	if c.nprogs == len(c.progs) {
		c.progs = append(c.progs, new(program))
	}
	p := c.progs[c.nprogs]
	c.compile(d, p)
	c.byHash[h] = append(c.byHash[h], int32(c.nprogs))
	c.last = c.nprogs
	c.nprogs++
	return p
}

// cterm is a term of the reduction graph.
type cterm struct {
	src, dst int32
	thr      float64
	unk      bool
	alive    bool
}

// scratch is reused by every compile of one Compute.
type scratch struct {
	nodes, pending, order       []int32
	inCount, inTerm, dense, seq []int32
	alias                       []int32
	isFH, gone                  []bool
	terms                       []cterm
	srcStart, bySrc, dstGroup   []int32
	grpCount                    []int32
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// compile builds d's class program into p, recycling p's slices.
func (c *capCalc) compile(d int32, p *program) {
	r := c.r
	self := r.Self
	sc := &c.sc
	lo, hi := r.ParentStart[d], r.ParentStart[d+1]
	*p = program{
		parents: r.EdgeParent[lo:hi],
		inputs:  p.inputs[:0],
		gSrc:    p.gSrc[:0], gDst: p.gDst[:0], gOff: p.gOff[:0], gLen: p.gLen[:0], gPre: p.gPre[:0],
		gUnk: p.gUnk[:0], thr: p.thr[:0], pre: p.pre[:0], fhUnit: p.fhUnit[:0], fhPos: p.fhPos[:0],
		val: p.val, unk: p.unk,
	}

	// Inputs: D's parent edges other than Self's.
	for e := lo; e < hi; e++ {
		if r.EdgeParent[e] != self {
			p.inputs = append(p.inputs, e-lo)
		}
	}
	k := int32(len(p.inputs))

	// Ancestors of D (Self excluded) by BFS over parent edges; pending[s]
	// counts the DAG edges from slot s to its children inside the set.
	nodes, pending := sc.nodes[:0], sc.pending[:0]
	for _, pos := range p.inputs {
		q := r.EdgeParent[lo+pos]
		s := c.slotOf[q]
		if s < 0 {
			s = int32(len(nodes))
			c.slotOf[q] = s
			nodes = append(nodes, q)
			pending = append(pending, 0)
		}
		pending[s]++
	}
	for i := 0; i < len(nodes); i++ {
		m := nodes[i]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			q := r.EdgeParent[e]
			if q == self {
				continue
			}
			s := c.slotOf[q]
			if s < 0 {
				s = int32(len(nodes))
				c.slotOf[q] = s
				nodes = append(nodes, q)
				pending = append(pending, 0)
			}
			pending[s]++
		}
	}
	// Kahn order, children first.
	for _, pos := range p.inputs {
		pending[c.slotOf[r.EdgeParent[lo+pos]]]--
	}
	order := sc.order[:0]
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

	// Units: inputs 0..k-1, ancestor slot s is unit k+s.
	nu := int(k) + len(nodes)
	isFH := grow(sc.isFH, nu)
	gone := grow(sc.gone, nu)
	inCount := grow(sc.inCount, nu)
	inTerm := grow(sc.inTerm, nu)
	alias := grow(sc.alias, nu)
	for i := 0; i < nu; i++ {
		isFH[i], gone[i], inCount[i] = false, false, 0
	}
	for _, nb := range r.FirstHops(d) {
		if nb != d {
			isFH[k+c.slotOf[nb]] = true
		}
	}

	// Terms with series reduction in one pass: in Kahn order every unit's
	// incoming terms are final when it is reached, so an eliminated unit's
	// parent edges are created directly from its single source.
	terms := sc.terms[:0]
	for i, pos := range p.inputs {
		dst := k + c.slotOf[r.EdgeParent[lo+pos]]
		inCount[dst]++
		inTerm[dst] = int32(len(terms))
		terms = append(terms, cterm{src: int32(i), dst: dst, thr: inf, alive: true})
	}
	for _, s := range order {
		u := k + s
		src, a, ua := u, inf, false
		if inCount[u] == 1 {
			// A first hop must keep a readable value: it may only go when
			// its value equals its source's (threshold +Inf, known), and is
			// then read through alias.
			if t := &terms[inTerm[u]]; !isFH[u] || (t.thr == inf && !t.unk) {
				t.alive = false
				gone[u] = true
				alias[u] = t.src
				src, a, ua = t.src, t.thr, t.unk
			}
		}
		m := nodes[s]
		for e := r.ParentStart[m]; e < r.ParentStart[m+1]; e++ {
			q := r.EdgeParent[e]
			if q == self {
				continue
			}
			dst := k + c.slotOf[q]
			inCount[dst]++
			inTerm[dst] = int32(len(terms))
			terms = append(terms, cterm{src: src, dst: dst, thr: min(a, c.edgeBW[e]), unk: ua || c.edgeUnk[e], alive: true})
		}
	}

	// Dense numbering of surviving units: inputs, then Kahn order.
	dense := grow(sc.dense, nu)
	seq := sc.seq[:0]
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

	// Bucket alive terms by source (counting sort).
	srcStart := grow(sc.srcStart, nu+1)
	for i := range srcStart {
		srcStart[i] = 0
	}
	alive := 0
	for i := range terms {
		if terms[i].alive {
			srcStart[terms[i].src+1]++
			alive++
		}
	}
	for i := 1; i <= nu; i++ {
		srcStart[i] += srcStart[i-1]
	}
	bySrc := grow(sc.bySrc, alive)
	fill := grow(sc.grpCount, nu) // reused as a cursor here
	copy(fill, srcStart[:nu])
	for i := range terms {
		if terms[i].alive {
			bySrc[fill[terms[i].src]] = int32(i)
			fill[terms[i].src]++
		}
	}
	// Per source, group by destination; thresholds sorted with prefix sums.
	dstGroup := grow(sc.dstGroup, nu)
	for i := range dstGroup {
		dstGroup[i] = -1
	}
	p.thr = slices.Grow(p.thr, alive)
	p.pre = slices.Grow(p.pre, alive+len(seq))
	var cnt []int32
	for _, u := range seq {
		ts := bySrc[srcStart[u]:srcStart[u+1]]
		if len(ts) == 0 {
			continue
		}
		g0 := int32(len(p.gSrc))
		cnt = cnt[:0]
		for _, ti := range ts {
			dst := terms[ti].dst
			g := dstGroup[dst]
			if g < 0 {
				g = int32(len(p.gSrc))
				dstGroup[dst] = g
				p.gSrc = append(p.gSrc, dense[u])
				p.gDst = append(p.gDst, dense[dst])
				p.gUnk = append(p.gUnk, false)
				cnt = append(cnt, 0)
			}
			cnt[g-g0]++
		}
		// Offsets of the groups of u.
		off := int32(len(p.thr))
		for gi := g0; gi < int32(len(p.gSrc)); gi++ {
			p.gOff = append(p.gOff, off)
			p.gLen = append(p.gLen, 0)
			off += cnt[gi-g0]
		}
		p.thr = p.thr[:off]
		for _, ti := range ts {
			t := &terms[ti]
			g := dstGroup[t.dst]
			p.thr[p.gOff[g]+p.gLen[g]] = t.thr
			p.gLen[g]++
			if t.unk {
				p.gUnk[g] = true
			}
		}
		for _, ti := range ts {
			dstGroup[terms[ti].dst] = -1
		}
		for gi := g0; gi < int32(len(p.gSrc)); gi++ {
			t := p.thr[p.gOff[gi] : p.gOff[gi]+p.gLen[gi]]
			if len(t) > 1 {
				slices.Sort(t)
			}
			p.gPre = append(p.gPre, int32(len(p.pre)))
			sum := 0.0
			p.pre = append(p.pre, 0)
			for _, x := range t {
				sum += x
				p.pre = append(p.pre, sum)
			}
		}
	}
	for _, nb := range r.FirstHops(d) {
		if nb != d {
			u := k + c.slotOf[nb]
			if gone[u] {
				u = alias[u]
			}
			p.fhUnit = append(p.fhUnit, dense[u])
		}
	}
	p.direct = len(p.gSrc) == 0
	for _, u := range p.fhUnit {
		if int(u) >= len(p.inputs) {
			p.direct = false
			break
		}
		p.fhPos = append(p.fhPos, p.inputs[u])
	}
	p.val = grow(p.val, p.units)
	p.unk = grow(p.unk, p.units)
	for _, x := range nodes {
		c.slotOf[x] = -1
	}
	sc.nodes, sc.pending, sc.order = nodes, pending, order
	sc.isFH, sc.gone, sc.inCount, sc.inTerm, sc.alias = isFH, gone, inCount, inTerm, alias
	sc.terms, sc.dense, sc.seq = terms, dense, seq
	sc.srcStart, sc.bySrc, sc.grpCount, sc.dstGroup = srcStart, bySrc, fill, dstGroup
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
