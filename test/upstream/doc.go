// Package upstream proves the upstream format (generator.Upstream, `generate --format upstream`) in Argo
// CD's own trees: it copies the module source of Argo CD v3.6.2 and v2.14.21 out of the Go module cache,
// overlays the generated files and runs Argo CD's own tests that read resource_customizations there,
// unmodified. It also keeps the recorded inputs of our own cases (generator/upstreamcases) in step with
// the committed timelines, and renders docs/upstream.md. A module of its own: the copied trees are Go
// modules of their own, built with their own go.mod (v3.6.2 with Go 1.27.3), and this module imports
// neither.
package upstream
