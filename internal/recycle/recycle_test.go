package recycle

import "testing"

func TestPool(t *testing.T) {
	var p Pool[[]int]
	a := p.Get()
	if a == nil || *a != nil {
		t.Fatalf("first Get: %v", a)
	}
	*a = make([]int, 10)
	p.Put(a)
	if b := p.Get(); b != a {
		t.Fatal("the spare was not handed back")
	}
	// A second value while the spare is taken goes to the pool, not lost.
	c := new([]int)
	p.Put(a)
	p.Put(c)
	if got := p.Get(); got != a {
		t.Fatal("the spare is the first value put")
	}
}

func TestGrow(t *testing.T) {
	s := Grow([]int(nil), 8)
	if len(s) != 8 || cap(s) != 10 {
		t.Fatalf("len %d cap %d, want 8 and 10 (a quarter to spare)", len(s), cap(s))
	}
	s[0] = 7
	u := Grow(s, 4)
	if len(u) != 4 || &u[0] != &s[0] || u[0] != 7 {
		t.Fatal("a large enough slice is reused as is")
	}
}
