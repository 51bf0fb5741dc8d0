package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fared/fared/internal/closgen"
	"github.com/fared/fared/interop"
)

// genOptions are the flags every generator shares.
type genOptions struct {
	name     string
	frr      int    // the last frr leaves are FRR nodes
	bw       string // one bandwidth for every link, or "random" (closgen's seeded speeds)
	seed     uint64
	flooding string // topology-level flooding: "", full or reduced
}

// genCommand: farelab gen clos3|clos5 [flags] prints a topology file.
func genCommand(c *cli) *cobra.Command {
	gen := &cobra.Command{Use: "gen", Short: "Print a generated topology file (big CLOS fabrics) to stdout"}
	var o genOptions
	var spines, leaves, pods, super int
	add := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&o.name, "name", "", "lab name (default clos3 / clos5)")
		cmd.Flags().IntVar(&o.frr, "frr", 0, "make the last N leaves FRR nodes (the rest run fared)")
		cmd.Flags().StringVar(&o.bw, "bw", "100G", `link bandwidth (bits/s, K/M/G/T), or "random": seeded 40G-400G per link`)
		cmd.Flags().Uint64Var(&o.seed, "seed", 1, "seed of --bw random")
		cmd.Flags().StringVar(&o.flooding, "flooding", "", "topology-level flooding key: full or reduced (default: not written)")
		gen.AddCommand(cmd)
	}
	clos3 := &cobra.Command{
		Use:   "clos3 --spines S --leaves L",
		Short: "A 3-stage leaf-spine fabric: every leaf linked to every spine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := closgen.ThreeStage{Spines: spines, Leaves: leaves, Seed: o.seed}
			if spines < 1 || leaves < 1 {
				return errors.New("clos3: --spines and --leaves must be at least 1")
			}
			return writeGenerated(c.stdout, f.Fabric(), withName(o, "clos3"), leaves)
		},
	}
	clos3.Flags().IntVar(&spines, "spines", 4, "spines")
	clos3.Flags().IntVar(&leaves, "leaves", 12, "leaves")
	add(clos3)
	var spines5, leaves5 int
	clos5 := &cobra.Command{
		Use:   "clos5 --pods P --spines S --leaves L --super X",
		Short: "A 5-stage fabric: pods of leaves and spines, spine i of every pod linked to the X super-spines of plane i",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pods < 1 || spines5 < 1 || leaves5 < 1 || super < 1 {
				return errors.New("clos5: --pods, --spines, --leaves and --super must be at least 1")
			}
			f := closgen.FiveStage{Pods: pods, Spines: spines5, Leaves: leaves5, Super: super, Seed: o.seed}
			return writeGenerated(c.stdout, f.Fabric(), withName(o, "clos5"), pods*leaves5)
		},
	}
	clos5.Flags().IntVar(&pods, "pods", 2, "pods")
	clos5.Flags().IntVar(&spines5, "spines", 2, "spines per pod (and planes of super-spines)")
	clos5.Flags().IntVar(&leaves5, "leaves", 4, "leaves per pod")
	clos5.Flags().IntVar(&super, "super", 2, "super-spines per plane")
	add(clos5)
	return gen
}

func withName(o genOptions, def string) genOptions {
	if o.name == "" {
		o.name = def
	}
	return o
}

// labNodeName maps closgen's node ids to topology names: "S3" → "s3",
// "P1L7" → "p1l7", "X0.2" → "x0-2".
func labNodeName(id string) string {
	return strings.ReplaceAll(strings.ToLower(id), ".", "-")
}

// isLeaf: closgen names leaves "L<i>" and "P<pod>L<i>".
func isLeaf(id string) bool {
	return strings.HasPrefix(id, "L") || (strings.HasPrefix(id, "P") && strings.Contains(id, "L"))
}

// writeGenerated writes f as a topology file and checks that it parses
// (names, interface lengths, node and link limits) before it is printed.
func writeGenerated(w io.Writer, f *closgen.Fabric, o genOptions, leaves int) error {
	if o.frr < 0 || o.frr > leaves {
		return fmt.Errorf("--frr %d: the fabric has %d leaves", o.frr, leaves)
	}
	fixedBW := ""
	if o.bw != "random" {
		bw, err := interop.ParseBandwidth(o.bw)
		if err != nil {
			return fmt.Errorf("--bw: %w", err)
		}
		fixedBW = interop.FormatBandwidth(bw)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# farelab gen: %d nodes, %d links\nname: %s\n", len(f.Nodes), len(f.Cables), o.name)
	if o.flooding != "" {
		fmt.Fprintf(&b, "flooding: %s\n", o.flooding)
	}
	b.WriteString("nodes:\n")
	leafNo := 0
	for _, n := range f.Nodes {
		kind := "fared"
		if isLeaf(n.Name) {
			if leafNo >= leaves-o.frr {
				kind = "frr"
			}
			leafNo++
		}
		fmt.Fprintf(&b, "  %s: {kind: %s}\n", labNodeName(n.Name), kind)
	}
	b.WriteString("links:\n")
	for _, c := range f.Cables {
		bw := fixedBW
		if bw == "" {
			bw = interop.FormatBandwidth(math.Round(float64(c.BW)*8/1e9) * 1e9) // closgen's speeds are whole Gb/s in float32 bytes/s
		}
		fmt.Fprintf(&b, "  - {a: %s, b: %s, bandwidth: %s}\n", labNodeName(f.Nodes[c.A].Name), labNodeName(f.Nodes[c.B].Name), bw)
	}
	if _, err := interop.ParseTopology([]byte(b.String())); err != nil {
		return fmt.Errorf("generated topology does not load: %w", err)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
