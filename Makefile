# analysis-health — see README.md.
GO ?= go
# Packages with golden files (they define the -update flag).
GOLDEN_PKGS = ./generator/ ./inspect/ ./hooks/

.PHONY: all build test test-v2 test-v3 bench fuzz golden verify example

all: build test

build:
	$(GO) build -o bin/analysis-health ./cmd/analysis-health

# The full suite: the main module (engine, scripts, CLI, generator, Argo CD v2.14 and Argo Rollouts
# conformance) and the Argo CD v3.2 conformance module.
test: test-v2 test-v3

test-v2:
	$(GO) test -count=1 ./...

test-v3:
	cd conformance/v3 && $(GO) test -count=1 ./...

# Per-evaluation cost of our scripts vs Argo CD's built-ins in Argo CD v2.14's real VM, and the VM floor.
bench:
	$(GO) test -run '^$$' -bench BenchmarkHealth -benchtime 2000x -count 3 ./conformance/

# Mutated fixtures through all three scripts: no Lua error, no Unknown.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzScripts -fuzztime $(FUZZTIME) ./lua/

golden:
	$(GO) test $(GOLDEN_PKGS) -update

verify:
	$(GO) run ./cmd/analysis-health verify

example:
	$(GO) run ./cmd/analysis-health health -f testdata/examples/canary-analysis.yaml
