package lab

import (
	"fmt"
	"os"
	"testing"
)

var bins Bins

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fared-inc-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bins, err = BuildBins(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
