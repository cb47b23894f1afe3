// The install path, as a user takes it: `go install …@latest` from a module proxy built from `git archive
// HEAD`, outside the checkout, and verify.Test in a user's module (install/).
module github.com/analysis-health/analysis-health/test/repo

go 1.26

require golang.org/x/mod v0.22.0

require golang.org/x/tools v0.21.1-0.20240508182429-e35e4ccd0d2d // indirect
