// Command farebench runs the side-by-side benchmarks of bench/: fared
// against FRR on the same synthetic fabric (sidebyside), the kernel's
// bare netlink ceiling against fared's FIB (ceiling), and failure
// convergence on a small all-FRR and all-fared fabric (converge). It needs
// root, FRR and the fared binary; see bench/README.md.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "farebench", Short: "Side-by-side benchmarks of fared against FRR and the kernel", SilenceUsage: true}
	root.AddCommand(sidebysideCommand(), ceilingCommand(), convergeCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}

// findBin resolves a binary: the flag, next to farebench, then $PATH.
func findBin(flag, name string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found next to farebench or in $PATH (give --%s)", name, name)
	}
	return filepath.Abs(p)
}
