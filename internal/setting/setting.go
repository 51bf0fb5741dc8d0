// Package setting fills the settings of a configuration struct left unset.
// fared's tunables (timers, windows, caps) are all positive, and their
// structs take zero (or a negative value) to mean "the default".
package setting

import "reflect"

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

// Fill applies Default to every numeric field of the struct *c, from the
// same field of def; other fields (flags, names) are left as they are.
// It is for structs whose every number is such a tunable.
func Fill[T any](c *T, def T) {
	cv, dv := reflect.ValueOf(c).Elem(), reflect.ValueOf(def)
	for i := range cv.NumField() {
		f := cv.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if f.Int() <= 0 {
				f.SetInt(dv.Field(i).Int())
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if f.Uint() == 0 {
				f.SetUint(dv.Field(i).Uint())
			}
		case reflect.Float32, reflect.Float64:
			if f.Float() <= 0 {
				f.SetFloat(dv.Field(i).Float())
			}
		}
	}
}
