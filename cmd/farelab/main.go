// Command farelab builds labs of fared and FRR nodes in network
// namespaces from a topology file (see package interop).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/fared/fared/internal/buildinfo"

	"github.com/spf13/cobra"

	"github.com/fared/fared/interop"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "farelab:", err)
	}
	os.Exit(code)
}

// exitError carries the exit status of a command run by `farelab exec`.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var ee *exitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.code, nil // the command already said why
	}
	return 1, err
}

// cli is where every subcommand writes: its output, and with -v every
// command the lab runs.
type cli struct {
	stdout, stderr io.Writer
	verbose        bool
}

func (c *cli) logTo() io.Writer {
	if c.verbose {
		return c.stderr
	}
	return nil
}

// open opens a running lab, logging to stderr with -v.
func (c *cli) open(name string) (*interop.Lab, error) {
	l, err := interop.Open(name)
	if err != nil {
		return nil, err
	}
	l.SetLog(c.logTo())
	return l, nil
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "farelab",
		Short:         "Build labs of fared and FRR nodes in network namespaces",
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	c := &cli{stdout: stdout, stderr: stderr}
	root.PersistentFlags().BoolVarP(&c.verbose, "verbose", "v", false, "print every command run")
	root.AddCommand(upCommand(c), downCommand(c), statusCommand(c), execCommand(c), linkCommand(c), restartCommand(c), genCommand(c))
	return root
}

// upCommand: farelab up FILE [--name N] [--fared BIN] [--farectl BIN].
func upCommand(c *cli) *cobra.Command {
	var name, fared, farectl string
	up := &cobra.Command{
		Use:   "up FILE",
		Short: "Create the lab described by a topology file and start its daemons",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topo, err := interop.LoadTopology(args[0])
			if err != nil {
				return err
			}
			l, err := interop.Up(cmd.Context(), topo, interop.Options{Name: name, FaredBin: fared, FarectlBin: farectl, Log: c.logTo()})
			if err != nil {
				return err
			}
			printSummary(c.stdout, l)
			return nil
		},
	}
	up.Flags().StringVar(&name, "name", "", "lab name (default: the topology's name)")
	up.Flags().StringVar(&fared, "fared", "", "fared binary (default: next to farelab, then $PATH)")
	up.Flags().StringVar(&farectl, "farectl", "", "farectl binary (default: next to farelab, then $PATH)")
	return up
}

// downCommand: farelab down [NAME].
func downCommand(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "down [NAME]",
		Short: "Tear down a lab (all labs without NAME); works without its state file",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args
			if len(names) == 0 {
				all, err := interop.List()
				if err != nil {
					return err
				}
				names = all
			}
			var errs []error
			for _, n := range names {
				if err := interop.Down(n); err != nil {
					errs = append(errs, fmt.Errorf("down %s: %w", n, err))
					continue
				}
				fmt.Fprintf(c.stdout, "lab %s down\n", n)
			}
			if len(names) == 0 {
				fmt.Fprintln(c.stdout, "no labs")
			}
			return errors.Join(errs...)
		},
	}
}

// statusCommand: farelab status [NAME] [-j].
func statusCommand(c *cli) *cobra.Command {
	var asJSON bool
	status := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show labs, or one lab's nodes, links and daemons",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				names, err := interop.List()
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(c.stdout, names)
				}
				if len(names) == 0 {
					fmt.Fprintln(c.stdout, "no labs")
				}
				for _, n := range names {
					fmt.Fprintln(c.stdout, n)
				}
				return nil
			}
			l, err := interop.Open(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(c.stdout, l)
			}
			printSummary(c.stdout, l)
			return nil
		},
	}
	status.Flags().BoolVarP(&asJSON, "json", "j", false, "JSON output (the state file)")
	return status
}

// execCommand: farelab exec NODE [--lab NAME] -- CMD...
func execCommand(c *cli) *cobra.Command {
	var labName string
	execCmd := &cobra.Command{
		Use:   "exec NODE [--lab NAME] -- CMD...",
		Short: "Run a command in a node's namespace (farectl, vtysh and birdc get the node's socket or path space)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return errors.New("usage: farelab exec NODE [--lab NAME] -- CMD...")
			}
			l, err := openLab(labName)
			if err != nil {
				return err
			}
			n := l.Node(args[0])
			if n == nil {
				return fmt.Errorf("lab %s has no node %q", l.Name, args[0])
			}
			argv, err := execArgv(l, n, args[1:])
			if err != nil {
				return err
			}
			x := exec.CommandContext(cmd.Context(), argv[0], argv[1:]...)
			x.Stdin, x.Stdout, x.Stderr = os.Stdin, c.stdout, c.stderr
			// A host's INC client credentials (FAREINC_CA, FAREINC_TOKEN_FILE).
			if env := l.ExecEnv(n); len(env) > 0 {
				x.Env = append(os.Environ(), env...)
			}
			if err := x.Run(); err != nil {
				var xe *exec.ExitError
				if errors.As(err, &xe) {
					return &exitError{code: xe.ExitCode()}
				}
				return err
			}
			return nil
		},
	}
	execCmd.Flags().StringVar(&labName, "lab", "", "lab name (optional when only one lab exists)")
	return execCmd
}

// onLab is a subcommand of a running lab named by its first argument:
// run gets the opened lab and the arguments after the name.
func (c *cli) onLab(use, short string, args cobra.PositionalArgs, run func(ctx context.Context, l *interop.Lab, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := c.open(args[0])
			if err != nil {
				return err
			}
			return run(cmd.Context(), l, args[1:])
		},
	}
}

// linkCommand: farelab link add LAB A B [BANDWIDTH] | link del LAB A B.
func linkCommand(c *cli) *cobra.Command {
	link := &cobra.Command{Use: "link", Short: "Add or remove a p2p link of a running lab (both ends reconfigured live)"}
	link.AddCommand(c.onLab("add LAB A B [BANDWIDTH]",
		"Add a link between nodes A and B (bits/s with K/M/G/T, default 10G): veth, addresses, fared reloads, FRR through vtysh",
		cobra.RangeArgs(3, 4),
		func(ctx context.Context, l *interop.Lab, args []string) error {
			var bw float64
			if len(args) == 3 {
				var err error
				if bw, err = interop.ParseBandwidth(args[2]); err != nil {
					return err
				}
			}
			lk, changes, err := l.AddLink(ctx, args[0], args[1], bw)
			if lk != nil {
				fmt.Fprintf(c.stdout, "link %d added: %s %s %s <-> %s %s %s, %s\n", lk.Index, lk.A, lk.IfA, lk.AddrA, lk.B, lk.IfB, lk.AddrB,
					interop.FormatBandwidth(lk.Bandwidth))
			}
			printChanges(c.stdout, changes)
			return err
		}))
	link.AddCommand(c.onLab("del LAB A B",
		"Remove the last link between nodes A and B: both ends reconfigured without it, then the veth removed",
		cobra.ExactArgs(3),
		func(ctx context.Context, l *interop.Lab, args []string) error {
			lk, changes, err := l.DelLink(ctx, args[0], args[1])
			if lk != nil {
				fmt.Fprintf(c.stdout, "link %d removed: %s %s <-> %s %s\n", lk.Index, lk.A, lk.IfA, lk.B, lk.IfB)
			}
			printChanges(c.stdout, changes)
			return err
		}))
	return link
}

// restartCommand: farelab restart LAB NODE.
func restartCommand(c *cli) *cobra.Command {
	return c.onLab("restart LAB NODE",
		"Stop and start a node's daemons from its rendered config (fared keeps its kernel routes across it)",
		cobra.ExactArgs(2),
		func(ctx context.Context, l *interop.Lab, args []string) error {
			if err := l.RestartNode(ctx, args[0]); err != nil {
				return err
			}
			d, _ := l.Daemons(args[0])
			fmt.Fprintf(c.stdout, "node %s restarted: %v\n", args[0], d)
			return nil
		})
}

// printChanges shows what each end did: fared's reload report, FRR's
// vtysh commands.
func printChanges(w io.Writer, cs []interop.NodeChange) {
	for _, c := range cs {
		switch {
		case c.Reload != nil:
			fmt.Fprintf(w, "  %s (fared): reloaded\n", c.Node)
			for _, name := range slices.Sorted(maps.Keys(c.Reload.Modules)) {
				m := c.Reload.Modules[name]
				for _, x := range m.Changed {
					fmt.Fprintf(w, "    %s: %s\n", name, x)
				}
				for _, x := range m.Warnings {
					fmt.Fprintf(w, "    %s: NOT applied: %s\n", name, x)
				}
			}
		case len(c.Commands) > 0:
			fmt.Fprintf(w, "  %s (frr): vtysh %s\n", c.Node, strings.Join(c.Commands, " / "))
		}
	}
}

// openLab opens the named lab, or the only one.
func openLab(name string) (*interop.Lab, error) {
	if name != "" {
		return interop.Open(name)
	}
	names, err := interop.List()
	if err != nil {
		return nil, err
	}
	switch len(names) {
	case 0:
		return nil, errors.New("no labs")
	case 1:
		return interop.Open(names[0])
	}
	return nil, fmt.Errorf("several labs (%s): use --lab NAME", strings.Join(names, ", "))
}

// execArgv builds the command line for `farelab exec`: farectl gets the
// node's control socket, vtysh its FRR path space.
func execArgv(l *interop.Lab, n *interop.Node, cmd []string) ([]string, error) {
	switch cmd[0] {
	case "farectl":
		if n.Socket == "" {
			return nil, fmt.Errorf("node %s is %s: farectl needs a node running fared", n.Name, n.Kind)
		}
		bin := l.FarectlBin
		if bin == "" {
			bin = "farectl"
		}
		cmd = append([]string{bin, "-s", n.Socket}, cmd[1:]...)
	case "vtysh":
		if n.Kind != "frr" {
			return nil, fmt.Errorf("node %s is %s: vtysh needs an frr node", n.Name, n.Kind)
		}
		cmd = append([]string{"vtysh", "-N", n.FRRName}, cmd[1:]...)
	case "birdc":
		if n.Kind != "bird" {
			return nil, fmt.Errorf("node %s is %s: birdc needs a bird node", n.Name, n.Kind)
		}
		cmd = append([]string{"birdc", "-s", filepath.Join(n.Dir, "bird.ctl")}, cmd[1:]...)
	}
	return append([]string{"ip", "netns", "exec", n.Netns}, cmd...), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSummary(w io.Writer, l *interop.Lab) {
	fmt.Fprintf(w, "lab %s (%s)\n", l.Name, l.Dir)
	fmt.Fprintf(w, "INC credentials: %s (CA, node certificates, token key; hosts' tokens are set by farelab exec)\n\n", l.INCDir())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tNETNS\tLOOPBACK\tSYSTEM-ID\tCONTROL\tPIDS")
	for _, n := range l.Nodes {
		ctl := n.FRRName
		if n.Socket != "" {
			ctl = n.Socket
		}
		if n.Kind == "bird" {
			ctl = filepath.Join(n.Dir, "bird.ctl")
		}
		var pids []string
		for _, d := range []string{"zebra", "isisd", "ospfd", "fared", "lldpd", "bird"} {
			if p, ok := n.Pids[d]; ok {
				pids = append(pids, fmt.Sprintf("%s=%d", d, p))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Kind, n.Netns, n.Loopback, n.SystemID, ctl, strings.Join(pids, " "))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LINK\tA\tIFACE\tADDR\tB\tIFACE\tADDR\tBANDWIDTH\tMETRIC")
	for _, lk := range l.Links {
		if lk.LAN == "" {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", lk.Index, lk.A, lk.IfA, lk.AddrA, lk.B, lk.IfB, lk.AddrB,
				interop.FormatBandwidth(lk.Bandwidth), lk.Metric)
			continue
		}
		for i, m := range lk.Members {
			idx, b := "", ""
			if i == 0 {
				idx, b = fmt.Sprint(lk.Index), "lan "+lk.LAN+" ("+lk.Netns+")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", idx, m.Node, m.Iface, m.Addr, b, lk.Bridge+":"+m.Port, lk.Subnet,
				interop.FormatBandwidth(lk.Bandwidth), lk.Metric)
		}
	}
	tw.Flush()
}
