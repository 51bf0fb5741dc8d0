// Package setting fills the settings of a configuration struct left unset.
// fared's tunables (timers, windows, caps) are all positive, and their
// structs take zero (or a negative value) to mean "the default".
package setting

// Number is what a defaulted setting may be.
type Number interface {
	~int | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float64
}

// Default sets *v to def unless *v is positive.
func Default[T Number](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
