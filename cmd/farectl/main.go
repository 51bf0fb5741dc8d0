// Command farectl inspects and drives a running fared over its control
// socket. Every show command prints a table, or with -j the API's JSON.
//
// Each noun has its own file (isis.go, ospf.go, route.go, fib.go...) that
// adds its command tree to nouns; farectl links only the API's wire types
// and client, never the daemon.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
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

func (g *globals) table(header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(g.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}
