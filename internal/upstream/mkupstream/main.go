// Command mkupstream is `make upstream`: it assembles the upstream tree the proofs read
// (internal/upstream, tree.go) in bin/upstream from the files vendored in third_party/ and the folders of
// Go modules it downloads through the Go module proxy, and checks every file against
// third_party/SHA256SUMS, before copying (the sources) and after (the tree). A tree already there that
// checks is left as it is; one that does not is replaced. -update rewrites third_party/SHA256SUMS from
// the sources instead of checking them (after a vendored file or a Fetched version changed).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/analysis-health/analysis-health/internal/upstream"
)

func main() {
	out := flag.String("o", upstream.AssembledDir, "folder to assemble the tree in")
	update := flag.Bool("update", false, "rewrite "+upstream.SumsFile+" from the sources")
	flag.Parse()
	if err := run(*out, *update); err != nil {
		fmt.Fprintln(os.Stderr, "mkupstream:", err)
		os.Exit(1)
	}
}

func run(out string, update bool) error {
	root, err := upstream.RepoRoot()
	if err != nil {
		return err
	}
	sumsFile := filepath.Join(root, filepath.FromSlash(upstream.SumsFile))
	var sums map[string]string
	if !update {
		if sums, err = upstream.ReadSums(sumsFile); err != nil {
			return err
		}
		if files, err := upstream.ListTree(out, false); err == nil && upstream.CheckTree(files, sums) == nil {
			fmt.Printf("%s: %d upstream files, each as %s says\n", out, len(sums), upstream.SumsFile)
			return nil
		}
	}
	mods, err := upstream.DownloadFetched()
	if err != nil {
		return err
	}
	src, err := upstream.Sources(root, mods)
	if err != nil {
		return err
	}
	if update {
		if sums, err = upstream.SumTree(src); err != nil {
			return err
		}
		if err := upstream.WriteSums(sumsFile, sums); err != nil {
			return err
		}
		fmt.Printf("wrote %s: %d files\n", upstream.SumsFile, len(sums))
	} else if err := upstream.CheckTree(src, sums); err != nil {
		return fmt.Errorf("the sources: %w", err)
	}
	// Assembled beside out and renamed into place: a proof reading the tree never sees half of one.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := upstream.CopyTree(tree, src); err != nil {
		return err
	}
	files, err := upstream.ListTree(tree, false)
	if err != nil {
		return err
	}
	if err := upstream.CheckTree(files, sums); err != nil {
		return fmt.Errorf("the copy: %w", err)
	}
	if _, err := os.Lstat(out); err == nil {
		if err := os.Rename(out, filepath.Join(tmp, "old")); err != nil {
			return err
		}
	}
	if err := os.Rename(tree, out); err != nil {
		return err
	}
	fmt.Printf("assembled %s: %d upstream files (%d vendored in %s, the others from the Go module proxy), each as %s says\n",
		out, len(sums), len(sums)-fetchedCount(sums), upstream.ThirdPartyDir, upstream.SumsFile)
	return nil
}

func fetchedCount(sums map[string]string) int {
	n := 0
	for p := range sums {
		for _, f := range upstream.Fetched {
			if len(p) > len(f.To) && p[:len(f.To)+1] == f.To+"/" {
				n++
			}
		}
	}
	return n
}
