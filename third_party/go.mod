// Not a Go module of the project: this go.mod keeps third_party/ (upstream files vendored unmodified for
// the proofs, README.md) out of the product module's zip, so `go install …@latest` downloads none of it.
module github.com/analysis-health/analysis-health/third_party

go 1.26
