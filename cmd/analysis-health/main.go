// Command analysis-health evaluates and verifies Argo CD health scripts that carry the verdict of Argo
// Rollouts analysis. See README.md.
package main

import (
	"os"

	"github.com/analysis-health/analysis-health/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], &cli.Options{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
