package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/analysis-health/analysis-health/internal/cli"
)

// userDocs are the documents a user reads: README.md and docs/*.md, from the repository root.
func userDocs(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, p := range append(paths, "../../README.md") {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel("../..", p)
		docs[rel] = string(raw)
	}
	return docs
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)
	cliFlag  = regexp.MustCompile("`analysis-health ([a-z]+)[^`]*`|analysis-health ([a-z]+) [^\n`]*")
	longFlag = regexp.MustCompile(`(?:^|[\s\x60(])--([a-z][a-z0-9-]+)`)
)

// TestDocsLinks: every relative link of the user docs resolves to a file of the repository.
func TestDocsLinks(t *testing.T) {
	for doc, text := range userDocs(t) {
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := filepath.Join("../..", filepath.Dir(doc), target)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %s does not resolve", doc, target)
			}
		}
	}
}

// TestDocsNoSharedPaths: users have no ../shared folder (the reference material next to the developers'
// checkout); only the README's Development section, which is about running the proofs, may name it.
func TestDocsNoSharedPaths(t *testing.T) {
	for doc, text := range userDocs(t) {
		if doc == "README.md" {
			text, _, _ = strings.Cut(text, "\n## Development")
		}
		for i, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "../shared") {
				t.Errorf("%s:%d cites ../shared: %s", doc, i+1, line)
			}
		}
	}
}

// TestDocsFlagsExist: every --flag the docs give to an analysis-health verb is a flag of that verb.
func TestDocsFlagsExist(t *testing.T) {
	root := cli.NewRootCommand(&cli.Options{})
	flags := map[string]map[string]bool{}
	var collect func(c *cobra.Command, set map[string]bool)
	collect = func(c *cobra.Command, set map[string]bool) {
		c.Flags().VisitAll(func(f *pflag.Flag) { set[f.Name] = true })
		for _, sub := range c.Commands() {
			collect(sub, set)
		}
	}
	for _, c := range root.Commands() {
		set := map[string]bool{"help": true}
		collect(c, set) // a verb with subcommands (action list, action run): the flags of any
		flags[c.Name()] = set
	}
	flags[""] = map[string]bool{"help": true, "version": true}
	for doc, text := range userDocs(t) {
		// A command may continue on the next lines of a shell block (trailing backslash).
		text = strings.ReplaceAll(text, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			for _, m := range cliFlag.FindAllStringSubmatch(line, -1) {
				verb := m[1] + m[2]
				set, ok := flags[verb]
				if !ok {
					continue // prose ("analysis-health makes …"), not a command
				}
				command := m[0]
				for _, end := range []string{" && ", " | ", "; ", " > ", " >> "} {
					command, _, _ = strings.Cut(command, end)
				}
				for _, f := range longFlag.FindAllStringSubmatch(command, -1) {
					if !set[f[1]] {
						t.Errorf("%s: `analysis-health %s` has no flag --%s: %s", doc, verb, f[1], strings.TrimSpace(command))
					}
				}
			}
		}
	}
}
