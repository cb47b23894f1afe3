# analysis-health — see README.md.
GO ?= go
# Packages with golden files (they define the -update flag).
GOLDEN_PKGS = ./generator/ ./inspect/ ./hooks/ ./verdict/

.PHONY: e2e-all e2e-stream-v1.8 e2e-stream-v1.10 test-kargostage reliability e2e-live timelines-png all build dist test test-v2 test-analysisruns test-v3 test-v36 test-rollouts110 test-upstream bench bench-cli fuzz golden verify example e2e builtin-scripts skips-reset skips-summary check-no-skips

all: build test

build:
	$(GO) build -o bin/analysis-health ./cmd/analysis-health
	$(GO) build -o bin/rollouts-plugin-metric-analysis-health ./cmd/rollouts-plugin-metric-analysis-health

# The release (internal/dist): both binaries statically linked (CGO_ENABLED=0, -trimpath), the CLI for
# linux and darwin, amd64 and arm64, the plugin for linux amd64 and arm64, named <command>-<os>-<arch>,
# stamped with `git describe --tags --always --dirty`, and SHA256SUMS. Two runs on one commit give the
# same bytes (internal/dist TestReproducible).
DIST ?= dist
dist:
	# mkdist builds every artifact with CGO_ENABLED=0 -trimpath (internal/dist); set here for its own build too
	CGO_ENABLED=0 $(GO) run ./internal/dist/mkdist -o $(DIST)

# Proofs that need upstream files outside the Go modules (internal/upstream: $ANALYSIS_HEALTH_VENDOR,
# default ../shared/vendor) skip when they are absent and append one line each to this log; `make test`
# lists them at the end, and `make check-no-skips` (run by .ci/run) fails when any was skipped.
export ANALYSIS_HEALTH_SKIPLOG := $(CURDIR)/.skipped-proofs

# The full suite: the main module (engine, scripts, CLI, generator, Argo CD v2.14 and Argo Rollouts
# conformance), the Argo CD v3.2 and v3.6 conformance modules, and the Argo Rollouts v1.10.2 corpus.
test: skips-reset test-v2 test-analysisruns test-kargostage test-v3 test-v36 test-rollouts110 test-upstream e2e-all
	@$(MAKE) --no-print-directory skips-summary

skips-reset:
	@rm -f $(ANALYSIS_HEALTH_SKIPLOG)

skips-summary:
	@if [ -s $(ANALYSIS_HEALTH_SKIPLOG) ]; then \
		echo "Skipped proofs ($$(sort -u $(ANALYSIS_HEALTH_SKIPLOG) | wc -l)):"; sort -u $(ANALYSIS_HEALTH_SKIPLOG) | sed 's/^/  /'; \
	else echo "Skipped proofs: none"; fi

check-no-skips: skips-summary
	@test ! -s $(ANALYSIS_HEALTH_SKIPLOG) || { echo "proofs were skipped (see above): upstream files are missing"; exit 1; }

test-v2:
	$(GO) test -count=1 ./...

# The one rule for a revision's runs (analysisruns/), a module without dependencies of its own so that the
# recorder modules share it with the main module.
test-analysisruns:
	cd analysisruns && $(GO) test -count=1 ./...

# Kargo's Stage rules (e2e/kargo/stage), a module without dependencies shared by the e2e replay and the
# live suite's Kargo driver.
test-kargostage:
	cd e2e/kargo/stage && $(GO) test -count=1 ./...

test-v3:
	cd conformance/v3 && $(GO) test -count=1 ./...

# Argo CD v3.6.1 needs Go >= 1.27: the go command fetches Go 1.27.3 from the module proxy for this module
# only (the main module stays on the machine's Go).
V36_TOOLCHAIN = go1.27.3
test-v36:
	cd conformance/v36 && GOTOOLCHAIN=$(V36_TOOLCHAIN) $(GO) test -count=1 ./...

# The upstream corpus of Argo Rollouts v1.10.2 (docs/health-semantics.md), a module of its own: v1.10.2
# needs Go >= 1.26.10, fetched through the module proxy.
test-rollouts110:
	cd conformance/rollouts110 && GOTOOLCHAIN=$(V36_TOOLCHAIN) $(GO) test -count=1 ./...

# The upstream format in Argo CD's own trees (docs/upstream.md): v3.6.1's and v2.14.21's module source copied
# out of the module cache, overlaid, and their own util/lua tests run there (v3.6.1 with Go 1.27.3, which the
# test sets for that tree only). UPDATE=1 rewrites generator/upstreamcases and docs/upstream.md.
UPSTREAM_UPDATE = $(if $(filter 1,$(UPDATE)),-update,)
test-upstream:
	cd conformance/upstream && $(GO) test -count=1 -timeout 60m . $(UPSTREAM_UPDATE)

# Per-evaluation cost of our scripts vs Argo CD's built-ins and the VM floor, per kind and path, by phase,
# and on worst-case objects, in Argo CD v2.14's VM (conformance/) and v3.6.1's (conformance/v36); the raw
# output goes to internal/bench/benchdoc/testdata/, which renders docs/performance.md from it.
BENCH_COUNT ?= 5
# Whole evaluations run 2000 times a run, so a garbage collection more or less in a run moves its
# per-op figure little; the phases, measured alone and only to split the cost, 200 times.
BENCH_COST = -run '^$$' -bench 'BenchmarkCost$$' -benchtime 2000x -count $(BENCH_COUNT)
BENCH = -run '^$$' -bench 'BenchmarkPhases$$' -benchtime 200x -count $(BENCH_COUNT)
BENCH_WORST = -run '^$$' -bench 'BenchmarkWorstCase$$' -benchtime 10x -count 2
bench:
	$(GO) test $(BENCH_COST) ./conformance/ > internal/bench/benchdoc/testdata/v2.14.txt
	$(GO) test $(BENCH) ./conformance/ >> internal/bench/benchdoc/testdata/v2.14.txt
	$(GO) test $(BENCH_WORST) ./conformance/ >> internal/bench/benchdoc/testdata/v2.14.txt
	if [ -d conformance/v36 ]; then cd conformance/v36 && export GOTOOLCHAIN=go1.27.3 && \
		$(GO) test $(BENCH_COST) . > ../../internal/bench/benchdoc/testdata/v3.6.txt && \
		$(GO) test $(BENCH) . >> ../../internal/bench/benchdoc/testdata/v3.6.txt && \
		$(GO) test $(BENCH_WORST) . >> ../../internal/bench/benchdoc/testdata/v3.6.txt; fi
	$(GO) test -count=1 -run TestPerformanceDoc ./internal/bench/benchdoc/ -update
	@sed -n '/^## Against the goal/,/^## How the forms/p' docs/performance.md
	$(MAKE) bench-cli

# The CLI in bulk (docs/performance-cli.md, generated from the captured output): health -f on a
# 10,000-object List (throughput, peak RSS of the built binary), inspect and hooks against a bare decode.
BENCH_CLI_OUT = cmd/analysis-health/testdata/bench-cli.txt
bench-cli:
	$(GO) test -run '^$$' -bench BenchmarkBulk -benchtime 3x -count 1 ./cmd/analysis-health/ > $(BENCH_CLI_OUT).new || (cat $(BENCH_CLI_OUT).new; rm -f $(BENCH_CLI_OUT).new; exit 1)
	mv $(BENCH_CLI_OUT).new $(BENCH_CLI_OUT) && cat $(BENCH_CLI_OUT)
	$(GO) test -count=1 -run TestPerformanceCLIDoc ./cmd/analysis-health/ -update

# Mutated fixtures through all three scripts: no Lua error, no Unknown.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzScripts -fuzztime $(FUZZTIME) ./lua/

golden:
	$(GO) test $(GOLDEN_PKGS) -update

# verify --fuzz --lint over Argo CD's own built-in scripts (v2.14.21 in conformance/, v3.2.12 in
# conformance/v3), every finding replayed in Argo CD's own code; part of `make test` too.
# UPDATE=1 rewrites docs/argocd-builtin-scripts.md.
BUILTIN_UPDATE = $(if $(filter 1,$(UPDATE)),-update,)
builtin-scripts:
	$(GO) test -count=1 -run 'TestArgoCDBuiltinScripts|TestFuzzFindingClassesInArgoCD' ./conformance/ $(BUILTIN_UPDATE)
	cd conformance/v3 && $(GO) test -count=1 -run 'TestArgoCDv3BuiltinScripts|TestFuzzFindingClassesInArgoCDv3' . $(BUILTIN_UPDATE)

verify:
	$(GO) run ./cmd/analysis-health verify --fuzz

example:
	$(GO) run ./cmd/analysis-health health -f testdata/examples/canary-analysis.yaml

# End-to-end proof (e2e/, docs/why.md): Argo Rollouts' own rollout, analysis and experiment controllers,
# v1.8.5 (module e2e/recorder) and v1.10.2 (module e2e/recorder/v1.10, Go 1.27.3), on a real kube-apiserver
# v1.34.5 with etcd and the ReplicaSet controller (the program in module e2e/apiserver, built once for
# both); their tests also prove the committed timelines are what the controllers record today. Then every
# frame through Argo CD v2.14's application controller, Kargo's Stage rules and gitops-engine's sync with
# the barrier hook. UPDATE=1 re-records the timelines and rewrites the generated report in docs/why.md.
E2E_UPDATE = $(if $(filter 1,$(UPDATE)),-update,)
E2E_APISERVER ?= $(CURDIR)/bin/e2e-apiserver
E2E_GO127 = GOTOOLCHAIN=go1.27.3
# The plugin proof (docs/kargo.md) runs the plugin binary and the CLI of the main module, built once here.
E2E_PLUGIN ?= $(CURDIR)/bin/rollouts-plugin-metric-analysis-health
E2E_ANALYSIS_HEALTH ?= $(CURDIR)/bin/analysis-health
E2E_ENV = E2E_APISERVER=$(E2E_APISERVER) E2E_PLUGIN=$(E2E_PLUGIN) E2E_ANALYSIS_HEALTH=$(E2E_ANALYSIS_HEALTH)
# Every test of the recorder modules but the reliability and the live suite, which run on their own.
E2E_RECORD = -skip '^(TestReliability|TestLive)$$'
# v1.10's recorder is built with the live suite's tags, so that both use one test binary.
E2E_V110_TAGS = -tags 'rollouts_v1_10 e2e_live'
# The steps, as canned recipes (one command a line) that the targets below string together.
define e2e_bins
cd e2e/apiserver && $(E2E_GO127) $(GO) build -o $(E2E_APISERVER) .
$(GO) build -o $(E2E_PLUGIN) ./cmd/rollouts-plugin-metric-analysis-health
$(GO) build -o $(E2E_ANALYSIS_HEALTH) ./cmd/analysis-health
endef
define e2e_record_v1.8
cd e2e/recorder && $(E2E_ENV) $(GO) test -count=1 -timeout 60m $(E2E_RECORD) . $(E2E_UPDATE)
endef
define e2e_record_v1.10
cd e2e/recorder/v1.10 && $(E2E_ENV) $(E2E_GO127) $(GO) test -count=1 -timeout 60m $(E2E_V110_TAGS) $(E2E_RECORD) . $(E2E_UPDATE)
endef
# the plugin's reliability (docs/reliability.md): faults, least privilege, oversized objects and the
# 200-Rollout load, asserted; never -update here (make reliability records the run the page shows)
define e2e_reliability
cd e2e/recorder && $(E2E_ENV) $(GO) test -count=1 -timeout 30m -run '^TestReliability$$' .
endef
define e2e_replay
$(GO) test -count=1 -timeout 30m ./e2e/ -run 'TestKargo|TestAnalysisRunsAreNotManaged|TestRolloutHealthGolden' $(E2E_UPDATE)
endef
define e2e_argocd
cd e2e/live/argocd && $(E2E_GO127) $(GO) build -o $(E2E_ARGOCD) .
endef
define e2e_live_run
cd e2e/recorder/v1.10 && $(E2E_ENV) E2E_ARGOCD=$(E2E_ARGOCD) $(E2E_GO127) $(GO) test -count=1 -timeout 30m $(E2E_V110_TAGS) -run '^TestLive$$' . $(E2E_UPDATE)
endef
define e2e_livedoc
$(GO) test -count=1 ./e2e/ -run 'TestLiveDoc' $(E2E_UPDATE)
endef

e2e:
	$(e2e_bins)
	$(e2e_record_v1.8)
	$(e2e_record_v1.10)
	$(e2e_reliability)
	$(e2e_replay)

# make e2e and make e2e-live as make test runs them: first two streams side by side, one per Rollouts version
# (v1.8.5: its recording, then the reliability; v1.10.2: its recording, then the build of the Argo CD
# program), then the live suite alone, then the replay and the live page, which read what they wrote. Each
# recorder has its own API server program and metrics server, on ports of their own, and keeps about one
# of the two cores busy (v1.8.5's TestRecord: 203 s of CPU in 188 s), and the recordings are on the fake
# clock, so the two take little more than the longer alone. The live suite runs alone because Argo CD
# runs on the real clock. -O keeps each stream's output together. UPDATE=1 runs the steps one after the
# other instead, in the order in which they read what the one before wrote (the live suite reads the
# replay's health).
ifeq ($(UPDATE),1)
e2e-all:
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory e2e-live
else
e2e-all:
	$(e2e_bins)
	$(MAKE) --no-print-directory -j2 -O e2e-stream-v1.8 e2e-stream-v1.10
	$(e2e_live_run)
	$(e2e_replay)
	$(e2e_livedoc)
endif

e2e-stream-v1.8:
	$(e2e_record_v1.8)
	$(e2e_reliability)

e2e-stream-v1.10:
	$(e2e_record_v1.10)
	$(e2e_argocd)

# The plugin's reliability (docs/reliability.md, generated from the committed run): e2e/recorder
# TestReliability in the real analysis controller with loads of RELIABILITY_LOAD Rollouts writes
# e2e/testdata/reliability/<version>.json (-update), each fuzz target runs RELIABILITY_FUZZTIME into
# internal/bench/reliabilitydoc/testdata/fuzz.txt, and the page is rendered from both (TestReliabilityDoc holds
# it to them). make e2e runs TestReliability with the 200 load only, and writes nothing.
RELIABILITY_LOAD ?= 200,2000
RELIABILITY_FUZZTIME ?= 2m
RELIABILITY_FUZZ = rolloutplugin:FuzzParseConfig rolloutplugin:FuzzMetric verdict:FuzzMutatedObjects
RELIABILITY_FUZZ_OUT = internal/bench/reliabilitydoc/testdata/fuzz.txt
reliability:
	cd e2e/apiserver && $(E2E_GO127) $(GO) build -o $(E2E_APISERVER) .
	$(GO) build -o $(E2E_PLUGIN) ./cmd/rollouts-plugin-metric-analysis-health
	$(GO) build -o $(E2E_ANALYSIS_HEALTH) ./cmd/analysis-health
	cd e2e/recorder && $(E2E_ENV) E2E_RELIABILITY_LOAD=$(RELIABILITY_LOAD) $(GO) test -count=1 -timeout 90m -run '^TestReliability$$' -v . -update
	: > $(RELIABILITY_FUZZ_OUT).new
	for t in $(RELIABILITY_FUZZ); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "=== fuzz ./$$pkg $$fn $(RELIABILITY_FUZZTIME)" >> $(RELIABILITY_FUZZ_OUT).new; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(RELIABILITY_FUZZTIME) ./$$pkg/ >> $(RELIABILITY_FUZZ_OUT).new 2>&1 || { cat $(RELIABILITY_FUZZ_OUT).new; exit 1; }; \
	done
	mv $(RELIABILITY_FUZZ_OUT).new $(RELIABILITY_FUZZ_OUT)
	$(GO) test -count=1 -run TestReliabilityDoc ./internal/bench/reliabilitydoc/ -update

# The live suite (e2e/recorder/live*.go, docs/why.md "Live"): Argo CD v3.6.1's own application controller
# and repo-server (the program of module e2e/live/argocd, Go 1.27.3) on the same real API server as
# Rollouts v1.10.2's controllers, syncing the scenarios' revisions from a git repository (the real `git`),
# argocd-cm rendered by Helm from the vendored argo-helm chart with `generate --format helm`.
E2E_ARGOCD ?= $(CURDIR)/bin/argocd-live
e2e-live:
	$(e2e_bins)
	$(e2e_argocd)
	$(e2e_live_run)
	$(e2e_livedoc)

# A sample of docs/timelines (the README's picture and the tallest of each version) rendered in headless
# Chromium at GitHub's content width on its light and dark page background; fails if a picture is blank,
# cut, or lacks its legend. Needs Debian's chromium (apt-get install -y chromium); not run by CI. The PNGs
# go to bin/timelines-png/ to be looked at.
TIMELINES_PNG ?= docs/timelines/v1.10.2/canary-background-promoted-while-running.svg docs/timelines/v1.8.5 docs/timelines/v1.10.2
timelines-png:
	$(GO) run ./e2e/cmd/timelines-png -out bin/timelines-png $(TIMELINES_PNG)
