package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fared/fared/inc/auth"
	"github.com/fared/fared/inc/client"
)

// The environment farelab sets for its hosts (and a scheduler may set for
// its ranks): flags take precedence.
const (
	envCA        = "FAREINC_CA"
	envToken     = "FAREINC_TOKEN"
	envTokenFile = "FAREINC_TOKEN_FILE"
)

// credentials resolves the client's credentials from flags, then the
// environment.
func credentials(o *opts) (client.Credentials, error) {
	var c client.Credentials
	c.Plaintext = o.plaintext
	c.Token = firstNonEmpty(o.token, os.Getenv(envToken))
	if c.Token == "" {
		if f := firstNonEmpty(o.tokenFile, os.Getenv(envTokenFile)); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return c, fmt.Errorf("join token: %w", err)
			}
			c.Token = strings.TrimSpace(string(b))
		}
	}
	if ca := firstNonEmpty(o.ca, os.Getenv(envCA)); ca != "" && !c.Plaintext {
		roots, err := auth.LoadCA(ca)
		if err != nil {
			return c, fmt.Errorf("INC CA: %w", err)
		}
		c.Roots = roots
	}
	return c, nil
}

// tokenCommand: fareinc token --key-file KEY --group G [--ttl D]: mint a
// join token with the manager's key (a scheduler does the same per job).
func tokenCommand(o *opts) *cobra.Command {
	var keyFile, subject string
	var ttl time.Duration
	cmd := &cobra.Command{Use: "token", Short: "Mint a join token for a group (or a prefix: 'job-42/*') with the manager's client-auth key",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" || o.group == "" {
				return errors.New("--key-file and --group are required")
			}
			keys, err := auth.LoadKeys(keyFile)
			if err != nil {
				return err
			}
			now := time.Now()
			tok, err := auth.Mint(keys[0], auth.Claims{Group: o.group, Subject: subject, Expires: now.Add(ttl).Unix()}, now)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		}}
	f := cmd.Flags()
	f.StringVar(&keyFile, "key-file", "", "the manager's client-auth key file (inc: client-auth: key-file); its first key signs")
	f.DurationVar(&ttl, "ttl", 24*time.Hour, "validity: longer than the job (calls with an expired token are refused)")
	f.StringVar(&subject, "subject", "", "who the token is for (shown in the manager's log)")
	return cmd
}

// tokenKeyCommand: fareinc token-key FILE: a new random key, mode 0600.
func tokenKeyCommand() *cobra.Command {
	return &cobra.Command{Use: "token-key FILE", Short: "Write a new random client-auth key (64 hex characters, mode 0600); refuses to overwrite",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if _, err := os.Stat(args[0]); err == nil {
				return fmt.Errorf("%s exists; not overwriting a key (tokens signed with it would stop working)", args[0])
			}
			return auth.NewKeyFile(args[0])
		}}
}
