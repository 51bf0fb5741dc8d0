// Package recycle recycles the working memory of the large pure
// computations (spf.Run, fare.ComputeTable, lsdb's Build): megabytes of
// slices that a computation needs and its result never holds, reused so
// that a run on a 6,000-node fabric does not pay for fresh memory every
// time.
package recycle

import (
	"sync"
	"sync/atomic"
)

// Pool holds values of *T between computations: one spare in front of a
// sync.Pool. A sync.Pool alone misses whenever the goroutine moved to
// another P since the Put (or two collections passed), and a missed
// workspace is regrown from nothing on every large computation; the spare
// serves the common case of one computation after another, and only
// concurrent computations reach the pool. The zero Pool is ready.
type Pool[T any] struct {
	spare atomic.Pointer[T]
	pool  sync.Pool
}

// Get returns a recycled *T, or a new zero one.
func (p *Pool[T]) Get() *T {
	if v := p.spare.Swap(nil); v != nil {
		return v
	}
	if v, _ := p.pool.Get().(*T); v != nil {
		return v
	}
	return new(T)
}

// Put gives v back for a later Get; the caller must not use it again.
func (p *Pool[T]) Put(v *T) {
	if !p.spare.CompareAndSwap(nil, v) {
		p.pool.Put(v)
	}
}

// Grow returns s with length n, reusing its array when it is large
// enough (the contents are then stale: callers clear what they read
// before writing), else a new one with a quarter to spare, so that a
// slowly growing database does not reallocate on every run.
func Grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
