// Package lab holds the INC lab tests: a fabric of fared switches (and an
// FRR spine) built by interop, with host namespaces running fareinc.
package lab
