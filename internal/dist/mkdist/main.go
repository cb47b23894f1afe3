// Command mkdist is `make dist`: the release artifacts and SHA256SUMS (internal/dist).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/analysis-health/analysis-health/internal/dist"
)

func main() {
	out := flag.String("o", "dist", "folder to write the artifacts to")
	version := flag.String("version", "", "version to stamp (default: git describe --tags --always --dirty)")
	flag.Parse()
	ctx := context.Background()
	if *version == "" {
		v, err := dist.GitDescribe(ctx, ".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkdist:", err)
			os.Exit(1)
		}
		*version = v
	}
	arts, err := dist.Build(ctx, dist.Options{Dir: ".", Out: *out, Version: *version})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkdist:", err)
		os.Exit(1)
	}
	for _, a := range arts {
		fmt.Printf("%s  %d bytes  sha256 %s\n", a.Path, a.Size, a.SHA256)
	}
	fmt.Printf("%s/%s (version %s)\n", *out, dist.SumsFile, *version)
}
