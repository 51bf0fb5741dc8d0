package main

import "github.com/spf13/cobra"

func convergeCommand() *cobra.Command { return &cobra.Command{Use: "converge"} }
