// Command farectl inspects and drives a running fared over its control
// socket. Every show command prints a table, or with -j the API's JSON.
//
// Each noun has its own file (isis.go, ospf.go, route.go, fib.go...) that
// builds its command tree, listed in nouns: one constructor per
// subcommand (view, lookup, or their own), whose RunE is show (GET) or act
// (POST) with a printer, printX(w, wire.X): a pure function of the
// answer, table-tested in <noun>_test.go. farectl links only the API's
// wire types and client, never the daemon.
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
)

type globals struct {
	socket string
	json   bool
	out    io.Writer
}

// nouns are the top-level command trees, each built in its own file.
var nouns = []func(g *globals) *cobra.Command{
	bfdCommand, runningConfigCommand, logCommand, fibCommand, incCommand, inofCommand, isisCommand, lsdbCommand,
	ospfCommand, qosCommand, routeCommand, fareCommand, spfCommand, statusCommand, reloadCommand,
}

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

// get fetches path; a view answers within 10s.
func (g *globals) get(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return g.client().Get(ctx, path)
}

// post sends body; a change may take longer to apply (30s).
func (g *globals) post(ctx context.Context, path string, body any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return g.client().Post(ctx, path, body)
}

// del sends a DELETE of path; like a change, it may take 30s.
func (g *globals) del(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return g.client().Delete(ctx, path)
}

// emit prints the raw JSON (for -j) or returns the error.
func (g *globals) emit(b []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = g.out.Write(b)
	return err
}

// answer is the RunE of every command that prints: ask fared with req,
// then print the answer with pr, or with -j the JSON as fared sent it
// (not decoded, so byte for byte).
func answer[T any](g *globals, req func(ctx context.Context, args []string) ([]byte, error), pr func(io.Writer, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		b, err := req(cmd.Context(), args)
		if err != nil || g.json {
			return g.emit(b, err)
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("unexpected answer from fared: %w", err)
		}
		return pr(g.out, v)
	}
}

// show is the RunE of a read-only view: GET the path the arguments give.
func show[T any](g *globals, path func(args []string) string, pr func(io.Writer, T) error) func(*cobra.Command, []string) error {
	return answer(g, func(ctx context.Context, args []string) ([]byte, error) { return g.get(ctx, path(args)) }, pr)
}

// act is the RunE of a command that changes state: POST the body the
// arguments give.
func act[T any](g *globals, path string, body func(args []string) any, pr func(io.Writer, T) error) func(*cobra.Command, []string) error {
	return answer(g, func(ctx context.Context, args []string) ([]byte, error) { return g.post(ctx, path, body(args)) }, pr)
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

// query is path with the parameters of vals (key, value pairs) that have
// a value: an empty one is a filter left out.
func query(path string, vals ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(vals); i += 2 {
		if vals[i+1] != "" {
			q.Set(vals[i], vals[i+1])
		}
	}
	return path + "?" + q.Encode()
}

// optional is a query parameter's value: "" (left out) for the zero
// value of a flag.
func optional[T comparable](v T) string {
	var zero T
	if v == zero {
		return ""
	}
	return fmt.Sprint(v)
}

// firstArg is the optional argument, "" without.
func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// group is a command that only holds subcommands (farectl isis, qos...).
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short}
	c.AddCommand(subs...)
	return c
}

// view is a subcommand without arguments that shows GET path, printed by
// pr.
func view[T any](g *globals, use, short, path string, pr func(io.Writer, T) error, aliases ...string) *cobra.Command {
	return &cobra.Command{Use: use, Aliases: aliases, Short: short, Args: cobra.NoArgs, RunE: show(g, at(path), pr)}
}

// lookup is a view of one argument (optional or required, as args says),
// sent as the query parameter key.
func lookup[T any](g *globals, use, short, path, key string, args cobra.PositionalArgs, pr func(io.Writer, T) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: args, RunE: show(g, withArg(path, key), pr)}
}
