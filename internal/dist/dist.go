// Package dist builds the release artifacts of `make dist`: both binaries statically linked
// (CGO_ENABLED=0, so the plugin starts in Argo Rollouts' distroless/static image, which has no dynamic
// loader), -trimpath and without VCS stamping so two builds of one commit are byte-identical, the version
// stamped from `git describe`, and a SHA256SUMS file in sha256sum's format.
package dist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Target is one binary for one platform.
type Target struct {
	// Cmd is the package's directory below the module root, e.g. "cmd/analysis-health".
	Cmd, GOOS, GOARCH string
}

// Name is the artifact's file name, "<command>-<os>-<arch>": the name --plugin-location examples and the
// generated argo-rollouts-values.yaml use in release URLs.
func (t Target) Name() string { return filepath.Base(t.Cmd) + "-" + t.GOOS + "-" + t.GOARCH }

// CLI and Plugin name the two commands.
const (
	CLI    = "cmd/analysis-health"
	Plugin = "cmd/rollouts-plugin-metric-analysis-health"
)

// Targets is what a release ships: the CLI where users run it, the plugin where the Rollouts controller
// runs (its images are linux/amd64 and linux/arm64).
var Targets = []Target{
	{CLI, "linux", "amd64"}, {CLI, "linux", "arm64"}, {CLI, "darwin", "amd64"}, {CLI, "darwin", "arm64"},
	{Plugin, "linux", "amd64"}, {Plugin, "linux", "arm64"},
}

// SumsFile is the checksum file's name.
const SumsFile = "SHA256SUMS"

// Options of a build.
type Options struct {
	// Dir is the module root; Out the folder the artifacts are written to (created).
	Dir, Out string
	// Version is stamped into both binaries (internal/version).
	Version string
	// Targets to build; nil: Targets.
	Targets []Target
	// Go is the go command; empty: "go".
	Go string
}

// Artifact is one built file.
type Artifact struct {
	Target Target
	Path   string
	SHA256 string
	Size   int64
}

// VersionPackage is the package whose stamped variable the linker sets.
const VersionPackage = "github.com/analysis-health/analysis-health/internal/version"

// Build builds every target into a staging folder inside o.Out and moves the artifacts and SHA256SUMS
// into o.Out only once all have built, so a failed build leaves no partial release.
func Build(ctx context.Context, o Options) ([]Artifact, error) {
	if o.Version == "" || strings.ContainsAny(o.Version, " \t\n'\"") {
		return nil, fmt.Errorf("dist: version %q: want a non-empty word (git describe)", o.Version)
	}
	targets, goCmd := o.Targets, o.Go
	if targets == nil {
		targets = Targets
	}
	if goCmd == "" {
		goCmd = "go"
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(o.Out, ".staging-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	ldflags := "-s -w -X " + VersionPackage + ".stamped=" + o.Version
	var arts []Artifact
	for _, t := range targets {
		path := filepath.Join(stage, t.Name())
		cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags="+ldflags,
			"-o", path, "./"+t.Cmd)
		cmd.Dir = o.Dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dist: go build %s for %s/%s: %v\n%s", t.Cmd, t.GOOS, t.GOARCH, err, out)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		arts = append(arts, Artifact{Target: t, Path: filepath.Join(o.Out, t.Name()), SHA256: hex.EncodeToString(sum[:]), Size: int64(len(raw))})
	}
	if err := os.WriteFile(filepath.Join(stage, SumsFile), Sums(arts), 0o644); err != nil {
		return nil, err
	}
	for _, a := range arts {
		if err := os.Rename(filepath.Join(stage, a.Target.Name()), a.Path); err != nil {
			return nil, err
		}
	}
	return arts, os.Rename(filepath.Join(stage, SumsFile), filepath.Join(o.Out, SumsFile))
}

// Sums is the SHA256SUMS text: "<hex>  <name>" a line, sorted by name, so `sha256sum -c SHA256SUMS`
// checks a download.
func Sums(arts []Artifact) []byte {
	lines := make([]string, 0, len(arts))
	for _, a := range arts {
		lines = append(lines, a.SHA256+"  "+a.Target.Name()+"\n")
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return []byte(strings.Join(lines, ""))
}

// GitDescribe is the version of the checkout at dir: `git describe --tags --always --dirty`, so an
// untagged commit is its short hash and uncommitted changes say "-dirty".
func GitDescribe(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git describe in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
