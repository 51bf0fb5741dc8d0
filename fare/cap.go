package fare

import (
	"slices"

	"github.com/fared/fared/internal/recycle"
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
//   - the remaining terms are grouped per (src, dst) into f(c) = Σ min(t_j, c)
//     = pre(j) + c·(n-j), j the number of thresholds below c and pre(j) the
//     sum of the j smallest. A group stores its distinct thresholds with the
//     count and the prefix sum up to each: links come in a few speeds, so a
//     64-threshold group of a 5-stage fabric has a handful of distinct
//     values, found by a short scan instead of a binary search over 64.
//
// A 5-stage remote-pod destination then costs 16 group evaluations instead
// of a 2,000-edge walk; the compile cost is paid once per pod.

type program struct {
	parents []int32 // class key: the DAG parent list shared by the class
	inputs  []int32 // positions (within D's parent edges) that are inputs
	units   int
	// groups in evaluation order; dv, cum and pc hold their thresholds
	// (see group).
	groups []group
	dv, pc []float64
	cum    []int32
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

// group is value(dst) += f(value(src)). Its n thresholds have cnt distinct
// values dv[off:off+cnt] (ascending); cum[i] thresholds are ≤ dv[i], and
// pc[i] is the sum of those cum[i] smallest (summed in ascending order).
// unk: a threshold is unknown.
type group struct {
	src, dst, off, cnt, n int32
	unk                   bool
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
	c.destOff = recycle.Grow(c.destOff, n)
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
	bw, bwUnk := c.edgeBW, c.edgeUnk
	if p.direct && len(p.fhPos) == len(fh) {
		// A 3-stage fabric: every value is an input.
		cv, cu = cv[:len(p.fhPos)], cu[:len(p.fhPos)]
		for i, pos := range p.fhPos {
			e := lo + pos
			cv[i], cu[i] = bw[e], bwUnk[e]
		}
		return cv, cu
	}
	val, unk := p.val, p.unk[:len(p.val)]
	for i, pos := range p.inputs {
		e := lo + pos
		val[i], unk[i] = bw[e], bwUnk[e]
	}
	for i := len(p.inputs); i < len(val); i++ {
		val[i], unk[i] = 0, false
	}
	dv, cum, pc := p.dv, p.cum, p.pc
	for gi := range p.groups {
		g := &p.groups[gi]
		x := val[g.src]
		o, m, n := g.off, g.cnt, g.n
		t := dv[o : o+m]
		// i = the number of distinct thresholds below x (counted without
		// branches: x is a link speed, as likely below as above)
		var i int32
		if m <= 8 {
			for _, v := range t {
				i += int32(b2u(v < x))
			}
		} else {
			a, b := int32(0), m
			for a < b {
				mid := (a + b) >> 1
				if t[mid] < x {
					a = mid + 1
				} else {
					b = mid
				}
			}
			i = a
		}
		// f(x) = pre(j) + x·(n-j), j the number of thresholds below x.
		var j int32
		v := 0.0
		if i > 0 {
			j, v = cum[o+i-1], pc[o+i-1]
		}
		if j < n {
			v += x * float64(n-j)
		}
		val[g.dst] += v
		if unk[g.src] || g.unk {
			unk[g.dst] = true
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
		cv[i], cu[i] = val[u], unk[u]
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
}

// unit is compile's state of one unit (an input or an ancestor).
type unit struct {
	in    int32 // incoming terms, all told (known once the BFS is done)
	left  int32 // DAG edges from children in the set not yet processed
	dense int32 // number among the surviving units
	fh    bool  // a first hop
	// A unit removed by series reduction (gone) is its single incoming
	// term: source alias, threshold thr, unknown flag unk. That term is
	// never created.
	gone  bool
	unk   bool
	alias int32
	thr   float64
}

// takes reports whether unit un, receiving a term of threshold thr and
// unknown flag unk, is removed by series reduction: the term is its only
// one, and a first hop must keep a readable value, so it may only go when
// its value equals its source's (threshold +Inf, known). It then records
// the term in un.
func (un *unit) takes(src int32, thr float64, unk bool) bool {
	if un.in != 1 || (un.fh && (thr != inf || unk)) {
		return false
	}
	un.gone, un.alias, un.thr, un.unk = true, src, thr, unk
	return true
}

// scratch is reused by every compile of one Compute. Compile's loops live
// in functions of their own, each with few slices, so that they keep them
// in registers.
type scratch struct {
	nodes, order, seq         []int32
	units                     []unit
	terms                     []cterm
	srcStart, bySrc, dstGroup []int32
	cnt                       []int32
	thr                       []float64
}

// compile builds d's class program into p, recycling p's slices.
func (c *capCalc) compile(d int32, p *program) {
	r := c.r
	self := r.Self
	ps, ep := r.ParentStart, r.EdgeParent
	slotOf := c.slotOf
	sc := &c.sc
	lo, hi := ps[d], ps[d+1]
	*p = program{
		parents: ep[lo:hi],
		inputs:  p.inputs[:0],
		groups:  p.groups[:0], dv: p.dv[:0], pc: p.pc[:0], cum: p.cum[:0], fhUnit: p.fhUnit[:0], fhPos: p.fhPos[:0],
		val: p.val, unk: p.unk,
	}

	// Inputs: D's parent edges other than Self's.
	for e := lo; e < hi; e++ {
		if ep[e] != self {
			p.inputs = append(p.inputs, e-lo)
		}
	}
	k := int32(len(p.inputs))

	// Ancestors of D (Self excluded), slot s for nodes[s], found by BFS
	// from the inputs' parents. At most every node: no appends in the
	// loops (a call there would spill their registers).
	// Units: inputs 0..k-1, ancestor slot s is unit k+s (initialised when
	// found).
	nodes, units := recycle.Grow(sc.nodes, len(slotOf)), recycle.Grow(sc.units, int(k)+len(slotOf))
	clear(units[:k])
	nn := 0
	for _, pos := range p.inputs {
		if q := ep[lo+pos]; slotOf[q] < 0 {
			slotOf[q] = int32(nn)
			nodes[nn], units[int(k)+nn] = q, unit{}
			nn++
		}
	}
	nn, nEdges := ancestors(ps, ep, self, slotOf, nodes, units[k:], nn)
	nodes = nodes[:nn]
	nu := int(k) + nn
	units = units[:nu]
	for _, nb := range r.FirstHops(d) {
		if nb != d {
			units[k+slotOf[nb]].fh = true
		}
	}

	// Terms, with series reduction, in Kahn order (children first). A unit
	// receives a term from each input and each DAG edge from a child in
	// the set.
	for _, pos := range p.inputs {
		units[k+slotOf[ep[lo+pos]]].in++
	}
	terms := recycle.Grow(sc.terms, int(k)+nEdges)
	nt := 0
	for i, pos := range p.inputs {
		dst := k + slotOf[ep[lo+pos]]
		if !units[dst].takes(int32(i), inf, false) {
			terms[nt] = cterm{src: int32(i), dst: dst, thr: inf}
			nt++
		}
	}
	order := recycle.Grow(sc.order, nn)
	no := 0
	for s := range nn {
		if units[int(k)+s].left == 0 {
			order[no] = int32(s)
			no++
		}
	}
	nt, no = reduce(ps, ep, self, k, slotOf, nodes, units, terms, nt, c.edgeBW, c.edgeUnk, order, no)
	terms, order = terms[:nt], order[:no]

	// Dense numbering of surviving units: inputs, then Kahn order.
	seq := sc.seq[:0]
	for i := int32(0); i < k; i++ {
		units[i].dense = int32(len(seq))
		seq = append(seq, i)
	}
	for _, s := range order {
		if u := k + s; !units[u].gone {
			units[u].dense = int32(len(seq))
			seq = append(seq, u)
		}
	}
	p.units = len(seq)

	// Terms by source (stable), then the groups.
	srcStart, bySrc := bucketBySource(terms, nu, sc.srcStart, sc.bySrc)
	dstGroup := recycle.Grow(sc.dstGroup, nu)
	for i := range dstGroup {
		dstGroup[i] = -1
	}
	sc.cnt, sc.thr = p.group(seq, units, terms, srcStart, bySrc, dstGroup, sc.cnt, sc.thr)

	for _, nb := range r.FirstHops(d) {
		if nb != d {
			u := k + slotOf[nb]
			if units[u].gone {
				u = units[u].alias
			}
			p.fhUnit = append(p.fhUnit, units[u].dense)
		}
	}
	p.direct = len(p.groups) == 0
	for _, u := range p.fhUnit {
		if int(u) >= len(p.inputs) {
			p.direct = false
			break
		}
		p.fhPos = append(p.fhPos, p.inputs[u])
	}
	p.val = recycle.Grow(p.val, p.units)
	p.unk = recycle.Grow(p.unk, p.units)
	for _, x := range nodes {
		slotOf[x] = -1
	}
	sc.nodes, sc.order, sc.seq, sc.units, sc.terms = nodes, order, seq, units, terms
	sc.srcStart, sc.bySrc, sc.dstGroup = srcStart, bySrc, dstGroup
}

// ancestors continues the BFS over parent edges (Self excluded) from the
// nn slots already in nodes, giving new nodes the next slots (and a fresh
// unit: units is indexed by slot here), and returns the new count. The
// units count the DAG edges from their children in the set (in, left);
// nEdges is their number.
func ancestors(ps, ep []int32, self int32, slotOf, nodes []int32, units []unit, nn int) (int, int) {
	nEdges := 0
	for i := 0; i < nn; i++ {
		m := nodes[i]
		for _, q := range ep[ps[m]:ps[m+1]] {
			if q == self {
				continue
			}
			s := slotOf[q]
			if s < 0 {
				s = int32(nn)
				slotOf[q] = s
				nodes[nn], units[nn] = q, unit{}
				nn++
			}
			un := &units[s]
			un.in++
			un.left++
			nEdges++
		}
	}
	return nn, nEdges
}

// reduce creates the terms of the ancestors in Kahn order (children
// first), from order[:no] (the slots without children in the set), and
// returns the term and order counts. A unit is processed once all its
// children are, and a removed unit's parent edges are created directly
// from its single source. Since a unit's count of incoming terms is known
// beforehand, a term into a unit that is removed is never created (the
// unit keeps it: unit.takes).
func reduce(ps, ep []int32, self, k int32, slotOf, nodes []int32, units []unit, terms []cterm, nt int,
	bw []float64, bwUnk []bool, order []int32, no int) (int, int) {
	for i := 0; i < no; i++ {
		s := order[i]
		u := k + s
		src, a, ua := u, inf, false
		if un := &units[u]; un.gone {
			src, a, ua = un.alias, un.thr, un.unk
		}
		m := nodes[s]
		first := ps[m]
		for j, q := range ep[first:ps[m+1]] {
			if q == self {
				continue
			}
			e := first + int32(j)
			sq := slotOf[q]
			thr, unk := min(a, bw[e]), ua || bwUnk[e]
			un := &units[k+sq]
			if !un.takes(src, thr, unk) {
				t := &terms[nt] // field by field: a literal goes through a temporary
				t.src, t.dst, t.thr, t.unk = src, k+sq, thr, unk
				nt++
			}
			if un.left--; un.left == 0 {
				order[no] = sq
				no++
			}
		}
	}
	return nt, no
}

// bucketBySource lists the terms per source unit (counting sort, stable):
// those of unit u are bySrc[srcStart[u]:srcStart[u+1]].
func bucketBySource(terms []cterm, nu int, srcStart, bySrc []int32) ([]int32, []int32) {
	srcStart = recycle.Grow(srcStart, nu+1)
	clear(srcStart)
	for i := range terms {
		srcStart[terms[i].src+1]++
	}
	for i := 1; i <= nu; i++ {
		srcStart[i] += srcStart[i-1]
	}
	bySrc = recycle.Grow(bySrc, len(terms))
	for i := range terms {
		src := terms[i].src
		bySrc[srcStart[src]] = int32(i)
		srcStart[src]++
	}
	// srcStart[u] is now the end of u's terms, the start of u+1's.
	copy(srcStart[1:], srcStart[:nu])
	srcStart[0] = 0
	return srcStart, bySrc
}

// group forms p's groups: per surviving unit in dense order, its terms
// grouped by destination in order of first appearance; each group's
// thresholds sorted and stored as distinct values with counts and prefix
// sums. dstGroup must be all -1 (and is left so); cnt and thr are scratch.
func (p *program) group(seq []int32, units []unit, terms []cterm, srcStart, bySrc, dstGroup, cnt []int32, thr []float64) ([]int32, []float64) {
	for _, u := range seq {
		ts := bySrc[srcStart[u]:srcStart[u+1]]
		if len(ts) == 0 {
			continue
		}
		g0 := int32(len(p.groups))
		cnt = cnt[:0]
		for _, ti := range ts {
			dst := terms[ti].dst
			g := dstGroup[dst]
			if g < 0 {
				g = int32(len(p.groups))
				dstGroup[dst] = g
				p.groups = append(p.groups, group{src: units[u].dense, dst: units[dst].dense})
				cnt = append(cnt, 0)
			}
			cnt[g-g0]++
		}
		// cnt[i] becomes the start of group g0+i in thr.
		off := int32(0)
		for i, n := range cnt {
			cnt[i] = off
			off += n
		}
		thr = recycle.Grow(thr, len(ts))
		for _, ti := range ts {
			t := &terms[ti]
			g := dstGroup[t.dst]
			gr := &p.groups[g]
			thr[cnt[g-g0]+gr.n] = t.thr
			gr.n++
			if t.unk {
				gr.unk = true
			}
		}
		for _, ti := range ts {
			dstGroup[terms[ti].dst] = -1
		}
		for gi := g0; gi < int32(len(p.groups)); gi++ {
			p.addThresholds(&p.groups[gi], thr[cnt[gi-g0]:cnt[gi-g0]+p.groups[gi].n])
		}
	}
	return cnt, thr
}

// addThresholds stores the thresholds t of group g (t is reordered).
func (p *program) addThresholds(g *group, t []float64) {
	g.off = int32(len(p.dv))
	if !p.addFew(t) {
		if len(t) > 1 {
			slices.Sort(t)
		}
		sum := 0.0
		for j, x := range t {
			sum += x
			if j+1 == len(t) || t[j+1] != x { // the last of its value
				p.dv = append(p.dv, x)
				p.cum = append(p.cum, int32(j+1))
				p.pc = append(p.pc, sum)
			}
		}
	}
	g.cnt = int32(len(p.dv)) - g.off
}

// addFew is addThresholds without sorting t when t has at most 16
// distinct values and no NaN (links come in a few speeds): the distinct
// values are counted, sorted, and summed in ascending order one threshold
// at a time, as over the sorted list. It reports false, having added
// nothing, otherwise.
func (p *program) addFew(t []float64) bool {
	var vals [16]float64
	var cnts [16]int32
	m := 0
	for _, x := range t {
		if x != x {
			return false
		}
		i := 0
		for i < m && vals[i] != x {
			i++
		}
		if i == m {
			if m == len(vals) {
				return false
			}
			vals[m], cnts[m] = x, 0
			m++
		}
		cnts[i]++
	}
	for i := 1; i < m; i++ { // insertion sort of the distinct values
		for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
			vals[j], vals[j-1] = vals[j-1], vals[j]
			cnts[j], cnts[j-1] = cnts[j-1], cnts[j]
		}
	}
	sum := 0.0
	n := int32(0)
	for i := range m {
		x := vals[i]
		for range cnts[i] {
			sum += x
		}
		n += cnts[i]
		p.dv = append(p.dv, x)
		p.cum = append(p.cum, n)
		p.pc = append(p.pc, sum)
	}
	return true
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
