// Command farectl inspects and drives a running fared over its control
// socket. Every show command prints a table, or with -j the API's JSON.
//
// Each noun has its own file (isis.go, ospf.go, route.go, fib.go...) that
// adds its command tree to nouns: one constructor per subcommand, whose
// RunE is show (GET) or act (POST) with a printer, printX(w, wire.X): a
// pure function of the answer, table-tested in <noun>_test.go. farectl
// links only the API's wire types and client, never the daemon.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/fared/fared/internal/buildinfo"

	"github.com/spf13/cobra"

	"github.com/fared/fared/api/client"
	"github.com/fared/fared/api/wire"
)

type globals struct {
	socket string
	json   bool
	out    io.Writer
}

// nouns are the top-level command trees, one per file.
var nouns []func(g *globals) *cobra.Command

func main() {
	if err := newRoot(os.Stdout).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "farectl:", err)
		os.Exit(1)
	}
}

func newRoot(out io.Writer) *cobra.Command {
	g := &globals{out: out}
	root := &cobra.Command{
		Use:           "farectl",
		Short:         "Inspect and drive fared",
		Version:       buildinfo.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.socket, "socket", "s", "", "fared control socket (default $FARED_SOCKET, else "+client.DefaultSocket+")")
	root.PersistentFlags().BoolVarP(&g.json, "json", "j", false, "print JSON")
	for _, n := range nouns {
		root.AddCommand(n(g))
	}
	return root
}

func (g *globals) client() *client.Client { return client.New(client.SocketPath(g.socket)) }

// get fetches path; unless -j, it also decodes the answer into v.
func (g *globals) get(ctx context.Context, path string, v any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := g.client().Get(ctx, path)
	if err != nil {
		return nil, err
	}
	if !g.json {
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("unexpected answer from fared: %w", err)
		}
	}
	return b, nil
}

// post sends body; unless -j, it decodes the answer into v (v nil: print
// the JSON as it came).
func (g *globals) post(ctx context.Context, path string, body, v any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := g.client().Post(ctx, path, body)
	if err != nil {
		return nil, err
	}
	if !g.json && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("unexpected answer from fared: %w", err)
		}
	}
	return b, nil
}

// emit prints the raw JSON (for -j) or returns the error.
func (g *globals) emit(b []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = g.out.Write(b)
	return err
}

// at is the path of a view that takes no arguments.
func at(path string) func([]string) string {
	return func([]string) string { return path }
}

// withArg is the path of a view whose optional argument is the query
// parameter key.
func withArg(path, key string) func([]string) string {
	return func(args []string) string {
		if len(args) == 1 {
			return path + "?" + key + "=" + url.QueryEscape(args[0])
		}
		return path
	}
}

// show is the RunE of a read-only view: GET the path the arguments give,
// then print the answer with pr, or with -j the JSON as fared sent it.
func show[T any](g *globals, path func(args []string) string, pr func(io.Writer, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var v T
		b, err := g.get(cmd.Context(), path(args), &v)
		if err != nil || g.json {
			return g.emit(b, err)
		}
		return pr(g.out, v)
	}
}

// act is the RunE of a command that changes state: POST the body the
// arguments give, then print the answer with pr (-j: as fared sent it).
func act[T any](g *globals, path string, body func(args []string) any, pr func(io.Writer, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var v T
		b, err := g.post(cmd.Context(), path, body(args), &v)
		if err != nil || g.json {
			return g.emit(b, err)
		}
		return pr(g.out, v)
	}
}

// clearCommand is `farectl PROTO clear WHAT [ARG]`: POST path with the
// body body(ARG) ("" without: every one), then say what pr makes of the
// count.
func clearCommand(g *globals, parentShort string, c *cobra.Command, path string, body func(arg string) any,
	pr func(w io.Writer, v wire.Cleared, arg string) error) *cobra.Command {
	var arg string
	c.Args = cobra.MaximumNArgs(1)
	c.RunE = act(g, path, func(args []string) any {
		arg = ""
		if len(args) == 1 {
			arg = args[0]
		}
		return body(arg)
	}, func(w io.Writer, v wire.Cleared) error { return pr(w, v, arg) })
	clear := &cobra.Command{Use: "clear", Short: parentShort}
	clear.AddCommand(c)
	return clear
}
