# analysis-health — see README.md; the rooms of the tree: docs/architecture.md.
GO ?= go

# Every module is built in module mode, against its own go.mod: the committed go.work is for editors and
# holds only the modules one build list can serve (docs/architecture.md, "The workspace").
export GOWORK := off

# The one pin of the newer Go. A module whose go.mod asks for more than the machine's Go 1.26.8 (Argo CD
# v3.6.2 needs 1.27, Argo Rollouts v1.10.2 1.26.10) gets it: the go command fetches it from the module proxy.
GO_NEWER := go1.27.3
# toolchain DIR: the GOTOOLCHAIN for the module in DIR, read off its go.mod's go line.
toolchain = $$(case "$$(sed -n 's/^go //p' $(CURDIR)/$(1)/go.mod)" in (1.26|1.26.[0-8]) echo local;; (*) echo $(GO_NEWER);; esac)

# The product is the root module; the proofs are the modules under test/, each named by the upstream
# version it pins (test/README.md). These are the modules whose `go test ./...` is the proof; the two
# Rollouts modules and the programs (test/kube-apiserver-v1.34, test/live-argocd-v3.6) run in `make e2e`.
UNIT_MODULES := . test test/formats test/argocd-v2.14 test/argocd-v3.2 test/argocd-v3.6 test/upstream test/rollouts test/repo
ROLLOUTS_MODULES := test/rollouts-v1.8 test/rollouts-v1.10
MODULES := $(UNIT_MODULES) test/argocd-v3-adapter $(ROLLOUTS_MODULES) test/kube-apiserver-v1.34 test/live-argocd-v3.6 test/kargo-v1.11

# The upstream files that are not Go packages (the argo-helm charts, the argocd-operator and Kargo CRDs,
# Kargo's nested modules, chart and UI source): `make upstream` assembles them in bin/upstream from
# third_party/ and the folders of github.com/akuity/kargo@v1.11.2 it fetches through the Go module proxy,
# every file checked against third_party/SHA256SUMS (third_party/README.md); a tree that checks is left as
# it is. The proofs read it (internal/upstream; $ANALYSIS_HEALTH_VENDOR when set); `make test` runs it first.
UPSTREAM := $(CURDIR)/bin/upstream
VENDOR_TREE := $(if $(ANALYSIS_HEALTH_VENDOR),$(abspath $(ANALYSIS_HEALTH_VENDOR)),$(UPSTREAM))

# Proofs that need upstream files outside the Go modules skip when they are absent (one line naming what is
# missing and `make upstream`) and append one line each to this log; `make test`
# lists them at the end, and `make check-no-skips` (run by .ci/run) fails when any was skipped.
export ANALYSIS_HEALTH_SKIPLOG := $(CURDIR)/.skipped-proofs

.PHONY: all build dist test race upstream check unit e2e e2e-live e2e-streams reliability install-test docs bench bench-cli \
	fuzz golden verify example test-upstream builtin-scripts timelines-png tidy skips-reset skips-summary check-no-skips \
	$(addprefix unit/,$(UNIT_MODULES)) stream/v1.8 stream/v1.10

all: build test

# The plugin statically linked, as the release's: the Rollouts controller's image has no libc or loader, so
# a cgo build cannot start there (generate --format kargo --plugin-file refuses one).
build:
	$(GO) build -o bin/analysis-health ./cmd/analysis-health
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/rollouts-plugin-metric-analysis-health ./cmd/rollouts-plugin-metric-analysis-health

# The release (internal/dist): both binaries statically linked (CGO_ENABLED=0, -trimpath), the CLI for
# linux and darwin, amd64 and arm64, the plugin for linux amd64 and arm64, named <command>-<os>-<arch>,
# stamped with `git describe --tags --always --dirty`, and SHA256SUMS. Two runs on one commit give the
# same bytes (internal/dist TestReproducible).
DIST ?= dist
dist:
	CGO_ENABLED=0 $(GO) run ./internal/dist/mkdist -o $(DIST)

# Everything, each proof once: every module's tests (two modules at a time), the install path, then the
# end-to-end proof and the live suite; then the list of skipped proofs.
test: skips-reset upstream race unit e2e-all
	@$(MAKE) --no-print-directory skips-summary

# The metric plugin's packages under the race detector: the plugin runs in the Rollouts controller's
# process space for every team, its informers, sweeper and measurements on goroutines of their own.
race:
	$(GO) test -race -count=1 ./internal/plugin/... ./cmd/rollouts-plugin-metric-analysis-health/

upstream:
	$(GO) run ./internal/upstream/mkupstream -o $(UPSTREAM)

# For contributors: the product's unit tests and the fastest conformance (Argo CD v3.2's suite), a few
# minutes warm.
# -short leaves out the release's cross-builds (internal/dist TestReproducible), which make test runs.
check:
	$(GO) vet ./...
	$(GO) test -short -count=1 ./...
	cd test/argocd-v3.2 && $(GO) test -count=1 ./...

# Two modules at a time: a module's test binaries run while the next one compiles (-O keeps each one's
# output together).
unit: upstream
	@$(MAKE) --no-print-directory -j2 -O $(addprefix unit/,$(UNIT_MODULES))

TEST_TIMEOUT ?= 60m
$(addprefix unit/,$(UNIT_MODULES)): unit/%:
	cd $* && GOTOOLCHAIN=$(call toolchain,$*) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# `go install …@latest` from a module proxy built on disk from `git archive HEAD`, outside the checkout,
# then the installed CLI on the bundled example, and a user module that runs verify.Test (test/repo/install;
# part of `make unit`).
install-test:
	cd test/repo && $(GO) test -count=1 ./install/

# The upstream format in Argo CD's own trees (docs/upstream.md), alone; UPDATE=1 rewrites
# generator/upstreamcases and docs/upstream.md.
test-upstream:
	cd test/upstream && $(GO) test -count=1 -timeout 60m . $(UPDATE_FLAG)

tidy:
	@for m in $(MODULES); do echo "== $$m"; (cd $$m && GOTOOLCHAIN=$(call toolchain,$$m) $(GO) mod tidy) || exit 1; done

skips-reset:
	@rm -f $(ANALYSIS_HEALTH_SKIPLOG)

skips-summary:
	@if [ -s $(ANALYSIS_HEALTH_SKIPLOG) ]; then \
		echo "Skipped proofs ($$(sort -u $(ANALYSIS_HEALTH_SKIPLOG) | wc -l)):"; sort -u $(ANALYSIS_HEALTH_SKIPLOG) | sed 's/^/  /'; \
	else echo "Skipped proofs: none"; fi

check-no-skips: skips-summary
	@test ! -s $(ANALYSIS_HEALTH_SKIPLOG) || { echo "proofs were skipped (see above): upstream files are missing"; exit 1; }

# Every generated block of docs/, README.md and test/README.md rewritten by its owner's test (one marker
# style, internal/docblock; docs/architecture.md, "Generated docs"); each owner's test fails on drift in
# `make test`, and TestDocBlocks on a block without an owner.
docs:
	$(GO) test -count=1 -run '^(TestKargoDoc|TestDocValueExample|TestPerformanceDoc|TestReliabilityDoc|TestPerformanceCLIDoc|TestActionsDoc|TestInspectDoc)$$' ./generator/ ./internal/plugin/verdict/ ./internal/bench/benchdoc/ ./internal/bench/reliabilitydoc/ ./cmd/analysis-health/ ./internal/cli/ -update
	cd test && $(GO) test -count=1 -run '^(TestModulesTable|TestSupportedVersions|TestDocRealControllerProof|TestHumanGateDoc)$$' ./modules/ ./verdict/ -update
	cd test/rollouts && $(GO) test -count=1 -run '^TestTwoClustersDoc$$' ./live/ -update
	cd test/upstream && $(GO) test -count=1 -timeout 60m -run '^TestUpstreamDoc$$' . -update
	cd test/argocd-v2.14 && $(GO) test -count=1 -timeout 60m -run '^(TestArgoCDBuiltinScripts|TestUpstreamCorpus|TestKargo|TestLiveDoc|TestNotificationsDoc)$$' . ./e2e/ ./notifications/ -update
	cd test/argocd-v3.2 && $(GO) test -count=1 -run '^TestArgoCDv3BuiltinScripts$$' . -update
	cd test/argocd-v3.6 && GOTOOLCHAIN=$(call toolchain,test/argocd-v3.6) $(GO) test -count=1 -run '^TestNotificationsDoc$$' ./notifications/ -update
	cd test/rollouts-v1.10 && GOTOOLCHAIN=$(call toolchain,test/rollouts-v1.10) $(GO) test -count=1 -run '^TestUpstreamCorpusRollouts110$$' ./corpus/ -update
	$(GO) test -count=1 -run '^TestDocBlocks$$' ./internal/docblock/

# Per-evaluation cost of our scripts vs Argo CD's built-ins and the VM floor, per kind and path, by phase,
# and on worst-case objects, in Argo CD v2.14's VM (test/argocd-v2.14) and v3.6.2's (test/argocd-v3.6);
# the raw output goes to internal/bench/benchdoc/testdata/, which renders docs/performance.md from it.
BENCH_COUNT ?= 5
# Whole evaluations run 2000 times a run, so a garbage collection more or less in a run moves its
# per-op figure little; the phases, measured alone and only to split the cost, 200 times.
BENCH_COST = -run '^$$' -bench 'BenchmarkCost$$' -benchtime 2000x -count $(BENCH_COUNT)
BENCH = -run '^$$' -bench 'BenchmarkPhases$$' -benchtime 200x -count $(BENCH_COUNT)
BENCH_WORST = -run '^$$' -bench 'BenchmarkWorstCase$$' -benchtime 10x -count 2
BENCH_OUT = $(CURDIR)/internal/bench/benchdoc/testdata
define bench_release
cd $(1) && export GOTOOLCHAIN=$(call toolchain,$(1)) && $(GO) test $(BENCH_COST) . > $(BENCH_OUT)/$(2).txt && \
	$(GO) test $(BENCH) . >> $(BENCH_OUT)/$(2).txt && $(GO) test $(BENCH_WORST) . >> $(BENCH_OUT)/$(2).txt
endef
bench:
	$(call bench_release,test/argocd-v2.14,v2.14)
	$(call bench_release,test/argocd-v3.6,v3.6)
	$(GO) test -count=1 -run TestPerformanceDoc ./internal/bench/benchdoc/ -update
	@sed -n '/^## Against the goal/,/^## How the forms/p' docs/performance.md
	$(MAKE) bench-cli

# The CLI in bulk (docs/performance-cli.md, generated from the captured output): health -f on a
# 10,000-object List (throughput, peak RSS of the built binary), inspect and hooks against a bare decode,
# and the peak RSS of every verb on the List and a 50,000-document chart (once: each run takes a minute).
BENCH_CLI_OUT = cmd/analysis-health/testdata/bench-cli.txt
bench-cli:
	$(GO) test -run '^$$' -bench 'BenchmarkBulk(Health|Stream)$$' -benchtime 3x -count 1 ./cmd/analysis-health/ > $(BENCH_CLI_OUT).new || (cat $(BENCH_CLI_OUT).new; rm -f $(BENCH_CLI_OUT).new; exit 1)
	$(GO) test -run '^$$' -bench 'BenchmarkBulkMemory$$' -benchtime 1x -count 1 ./cmd/analysis-health/ | grep '^Benchmark' >> $(BENCH_CLI_OUT).new || (cat $(BENCH_CLI_OUT).new; rm -f $(BENCH_CLI_OUT).new; exit 1)
	mv $(BENCH_CLI_OUT).new $(BENCH_CLI_OUT) && cat $(BENCH_CLI_OUT)
	$(GO) test -count=1 -run TestPerformanceCLIDoc ./cmd/analysis-health/ -update

# Mutated fixtures through all three scripts: no Lua error, no Unknown.
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzScripts -fuzztime $(FUZZTIME) ./lua/

# Golden files of the product's packages (the ones that define -update).
GOLDEN_PKGS = ./generator/ ./internal/gate/inspect/ ./internal/gate/hooks/ ./internal/plugin/verdict/
golden:
	$(GO) test $(GOLDEN_PKGS) -update

# verify --fuzz --lint over Argo CD's own built-in scripts (v2.14.21 in test/argocd-v2.14, v3.2.12 in
# test/argocd-v3.2), every finding replayed in Argo CD's own code; part of `make test` too.
# UPDATE=1 rewrites docs/argocd-builtin-scripts.md.
UPDATE_FLAG = $(if $(filter 1,$(UPDATE)),-update,)
builtin-scripts:
	cd test/argocd-v2.14 && $(GO) test -count=1 -run 'TestArgoCDBuiltinScripts|TestFuzzFindingClassesInArgoCD' . $(UPDATE_FLAG)
	cd test/argocd-v3.2 && $(GO) test -count=1 -run 'TestArgoCDv3BuiltinScripts|TestFuzzFindingClassesInArgoCDv3' . $(UPDATE_FLAG)

verify:
	$(GO) run ./cmd/analysis-health verify --fuzz

example:
	$(GO) run ./cmd/analysis-health health -f testdata/examples/canary-analysis.yaml

# The end-to-end proof (docs/why.md): Argo Rollouts' own rollout, analysis and experiment controllers,
# v1.8.5 (test/rollouts-v1.8) and v1.10.2 (test/rollouts-v1.10), driven by the recorder
# (test/rollouts/harness, scenarios, pluginproof, reliability, live) on a real kube-apiserver v1.34.5 with etcd and the ReplicaSet controller (the
# program of test/kube-apiserver-v1.34, built once for both); their tests prove the committed timelines
# in test/testdata are what the controllers record today, and the plugin in the real analysis controller.
# The replay of every frame through Argo CD v2.14 is test/argocd-v2.14/e2e (in `make unit`). UPDATE=1
# re-records the timelines and the reports.
E2E_APISERVER ?= $(CURDIR)/bin/e2e-apiserver
E2E_PLUGIN ?= $(CURDIR)/bin/rollouts-plugin-metric-analysis-health
E2E_ANALYSIS_HEALTH ?= $(CURDIR)/bin/analysis-health
E2E_ARGOCD ?= $(CURDIR)/bin/argocd-live
E2E_KARGO ?= $(CURDIR)/bin/kargo-controlplane
# The live suite runs Kargo's own controller and webhooks (test/kargo-v1.11) and records what Kargo wrote
# (docs/kargo.md, "Kargo's own controller in the live suite"); E2E_LIVE_KARGO=0 runs the model of
# test/kargo/stage in its place, for a contributor who does not build Kargo's control plane (not a proof).
E2E_LIVE_KARGO ?= 1
E2E_ENV = E2E_APISERVER=$(E2E_APISERVER) E2E_PLUGIN=$(E2E_PLUGIN) E2E_ANALYSIS_HEALTH=$(E2E_ANALYSIS_HEALTH) E2E_ARGOCD=$(E2E_ARGOCD) \
	E2E_KARGO=$(E2E_KARGO) E2E_LIVE_KARGO=$(E2E_LIVE_KARGO) E2E_KARGO_API_UI=$(E2E_KARGO_API_UI) E2E_KARGO_UI=$(KARGO_UI)
# Every test of the Rollouts modules but the reliability and the live suite, which run on their own.
E2E_RECORD = -skip '^(TestReliability|TestLive|TestLiveHumanGate|TestLiveTwoClusters)$$'
# v1.10's module is built with the live suite's tag, so that its recording and the live suite share one
# test binary; rollouts_v1_10 selects the harness's v1.10 controller wiring.
E2E_TAGS_v1.10 = -tags 'rollouts_v1_10 e2e_live'
# rollouts_test MOD, FLAGS: go test in a Rollouts module, with the e2e binaries. E2E_TEST_FLAGS=-json
# gives the passed test and subtest counts of each suite (what a change of the recorder's packages keeps).
define rollouts_test
cd test/rollouts-$(1) && $(E2E_ENV) GOTOOLCHAIN=$(call toolchain,test/rollouts-$(1)) $(GO) test -count=1 $(E2E_TEST_FLAGS) $(E2E_TAGS_$(1)) $(2) . $(UPDATE_FLAG)
endef
define e2e_bins
cd test/kube-apiserver-v1.34 && GOTOOLCHAIN=$(call toolchain,test/kube-apiserver-v1.34) $(GO) build -o $(E2E_APISERVER) .
$(GO) build -o $(E2E_PLUGIN) ./cmd/rollouts-plugin-metric-analysis-health
$(GO) build -o $(E2E_ANALYSIS_HEALTH) ./cmd/analysis-health
endef
# Rollouts v1.10.2's upstream corpus (docs/health-semantics.md), the one other package of its module.
define rollouts_corpus
cd test/rollouts-v1.10 && GOTOOLCHAIN=$(call toolchain,test/rollouts-v1.10) $(GO) test -count=1 ./corpus/
endef
define e2e_argocd
cd test/live-argocd-v3.6 && GOTOOLCHAIN=$(call toolchain,test/live-argocd-v3.6) $(GO) build -o $(E2E_ARGOCD) .
endef
# Kargo v1.11.2's control-plane program (test/kargo-v1.11: its controller and kubernetes-webhooks-server
# for the live suite), from the module proxy and Kargo's nested modules vendored in third_party/kargo, which
# the module's replace lines name. Without them it is not built: the live suite then skips Kargo with one
# line in the skip log, and make check-no-skips fails.
KARGO_NESTED := $(CURDIR)/third_party/kargo/v1.11.2/api/go.mod
# Built once per run, as the Argo CD program is; not for E2E_LIVE_KARGO=0.
define e2e_kargo
if [ "$(E2E_LIVE_KARGO)" = 0 ]; then :; \
	elif [ -f $(KARGO_NESTED) ]; then cd test/kargo-v1.11 && GOTOOLCHAIN=$(call toolchain,test/kargo-v1.11) $(GO) build -o $(E2E_KARGO) github.com/akuity/kargo/cmd/controlplane; \
	else echo "not building Kargo's control plane: $(KARGO_NESTED) is not vendored"; rm -f $(E2E_KARGO); fi
endef
# Kargo's UI and its API server, which the live suite opens in a browser on the Stages Kargo's controller
# verified (TestLive's kargo-ui subtest, test/rollouts/live/kargoui.go); not for E2E_LIVE_KARGO=0.
define e2e_kargo_ui
if [ "$(E2E_LIVE_KARGO)" != 0 ]; then $(MAKE) --no-print-directory kargo-ui kargo-api-ui; fi
endef
# The failed verification as Kargo's UI shows it (TestKargoUISmoke: a Stage whose verification our plugin
# failed on a recorded frame, in Kargo's UI in headless Chromium), which no live scenario reaches: with our
# health scripts and the barrier, a failed analysis errors the Promotion before Kargo verifies anything.
define e2e_kargo_ui_smoke
if [ "$(E2E_LIVE_KARGO)" != 0 ]; then cd test/rollouts && $(E2E_ENV) $(GO) test -count=1 -tags kargo_ui -run '^TestKargoUISmoke$$' ./kargoui/; fi
endef
# the plugin's reliability (docs/reliability.md): faults, least privilege, oversized objects and the
# 200-Rollout load, asserted; never -update here (make reliability records the run the page shows)
define e2e_reliability
cd test/rollouts-v1.8 && $(E2E_ENV) $(GO) test -count=1 $(E2E_TEST_FLAGS) -timeout 30m -run '^TestReliability$$' .
endef
# the plugin's multi-cluster read and the rotation of its token on two API servers (test/rollouts/tokenrotation:
# the Secret written by analysis-health kubeconfig with a TokenRequest; 48 s on a loaded two-core machine)
define e2e_tokenrotation
cd test/rollouts && $(E2E_ENV) $(GO) test -count=1 $(E2E_TEST_FLAGS) -tags e2e_tokenrotation -timeout 10m -run '^TestTokenRotationTwoClusters$$' ./tokenrotation/
endef
# On Kargo's controller TestLive (15 scenarios × 2 installs, then Kargo's UI in Chromium) and
# TestLiveHumanGate took 1,004 s together warm on two idle cores: the timeout leaves room for a slower machine.
define e2e_live_run
$(call rollouts_test,v1.10,-timeout 60m -run '^(TestLive|TestLiveHumanGate|TestLiveTwoClusters)$$')
endef

e2e: upstream
	$(e2e_bins)
	$(call rollouts_test,v1.8,-timeout 60m $(E2E_RECORD))
	$(call rollouts_test,v1.10,-timeout 60m $(E2E_RECORD))
	$(rollouts_corpus)
	$(e2e_reliability)
	$(e2e_tokenrotation)

# The live suite (test/rollouts/live, docs/why.md "Live"): Argo CD v3.6.2's own application
# controller and repo-server (the program of test/live-argocd-v3.6) on the same real API server as
# Rollouts v1.10.2's controllers, syncing the scenarios' revisions from a git repository (the real `git`),
# argocd-cm rendered by Helm from the vendored argo-helm chart with `generate --format helm`.
e2e-live: upstream
	$(e2e_bins)
	$(e2e_argocd)
	$(e2e_kargo)
	$(e2e_kargo_ui)
	$(e2e_live_run)

# make e2e and make e2e-live as make test runs them: two streams side by side, one per Rollouts version
# (v1.8.5: its recording, then the reliability; v1.10.2: its recording, then the build of the Argo CD
# program), then the live suite alone. Each recorder has its own API server program and metrics server,
# on ports of their own, and keeps about one of the two cores busy, and the recordings are on the fake
# clock. The live suite runs alone because Argo CD runs on the real clock. UPDATE=1 runs the steps one
# after the other instead, in the order in which each reads what the one before wrote.
ifeq ($(UPDATE),1)
e2e-all: upstream
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory e2e-live
else
e2e-all: upstream
	$(e2e_bins)
	$(MAKE) --no-print-directory -j2 -O stream/v1.8 stream/v1.10
	$(e2e_live_run)
endif

stream/v1.8:
	$(call rollouts_test,v1.8,-timeout 60m $(E2E_RECORD))
	$(e2e_reliability)
	$(e2e_tokenrotation)

stream/v1.10:
	$(call rollouts_test,v1.10,-timeout 60m $(E2E_RECORD))
	$(rollouts_corpus)
	$(e2e_argocd)
	$(e2e_kargo)
	$(e2e_kargo_ui)
	$(e2e_kargo_ui_smoke)

# The plugin's reliability (docs/reliability.md, generated from the committed runs): TestReliability of
# test/rollouts-v1.8 and of test/rollouts-v1.10, each in its release's real analysis controller, with the
# loads of RELIABILITY_LOAD and RELIABILITY_LOAD_110, writes test/testdata/reliability/<version>.json
# (-update); each fuzz target runs RELIABILITY_FUZZTIME into internal/bench/reliabilitydoc/testdata/fuzz.txt,
# and the page is rendered from them (TestReliabilityDoc holds it to them). A load is a Rollout count with
# the controller main's defaults (--qps 40, --burst 80, 30 --analysis-threads), or N@QPS[/THREADS] with the
# controller's client rate limit raised (burst 2×QPS), as a platform team raises it for a fleet. Each load
# is measured twice on the same Rollouts: our plugin, then Argo Rollouts' built-in web provider against the
# test's metrics server (E2E_RELIABILITY_PROVIDERS); on v1.10.2 also a plugin that does nothing (noop), the
# floor of the controller's plugin path, and, on the N:1 loads, our plugin with --watch=false (direct), the
# floor of our plugin's memory. make e2e runs v1.8.5's TestReliability with the 200
# load of the plugin only, and writes nothing.
RELIABILITY_LOAD ?= 200,2000,2000@400
RELIABILITY_LOAD_110 ?= 500:1,200,2000@400,10000@400
RELIABILITY_TIMEOUT ?= 150m
RELIABILITY_FUZZTIME ?= 2m
RELIABILITY_FUZZ = internal/plugin/rolloutplugin:FuzzParseConfig internal/plugin/rolloutplugin:FuzzMetric internal/plugin/rolloutplugin:FuzzRemoteResponse internal/plugin/verdict:FuzzMutatedObjects
RELIABILITY_FUZZ_OUT = internal/bench/reliabilitydoc/testdata/fuzz.txt
reliability:
	$(e2e_bins)
	cd test/rollouts-v1.8 && $(E2E_ENV) E2E_RELIABILITY_LOAD=$(RELIABILITY_LOAD) E2E_RELIABILITY_PROVIDERS=plugin,web $(GO) test -count=1 -timeout $(RELIABILITY_TIMEOUT) -run '^TestReliability$$' -v . -update
	cd test/rollouts-v1.10 && $(E2E_ENV) E2E_RELIABILITY_LOAD=$(RELIABILITY_LOAD_110) E2E_RELIABILITY_PROVIDERS=plugin,direct,web,noop GOTOOLCHAIN=$(call toolchain,test/rollouts-v1.10) $(GO) test -count=1 $(E2E_TAGS_v1.10) -timeout $(RELIABILITY_TIMEOUT) -run '^TestReliability$$' -v . -update
	: > $(RELIABILITY_FUZZ_OUT).new
	for t in $(RELIABILITY_FUZZ); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "=== fuzz ./$$pkg $$fn $(RELIABILITY_FUZZTIME)" >> $(RELIABILITY_FUZZ_OUT).new; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(RELIABILITY_FUZZTIME) ./$$pkg/ >> $(RELIABILITY_FUZZ_OUT).new 2>&1 || { cat $(RELIABILITY_FUZZ_OUT).new; exit 1; }; \
	done
	mv $(RELIABILITY_FUZZ_OUT).new $(RELIABILITY_FUZZ_OUT)
	$(GO) test -count=1 -run TestReliabilityDoc ./internal/bench/reliabilitydoc/ -update

# A sample of docs/timelines (the README's picture and the tallest of each version) rendered in headless
# Chromium at GitHub's content width on its light and dark page background; fails if a picture is blank,
# cut, or lacks its legend. Needs Debian's chromium (apt-get install -y chromium); not run by CI. The PNGs
# go to bin/timelines-png/ to be looked at.
TIMELINES_PNG ?= docs/timelines/v1.10.2/canary-background-promoted-while-running.svg docs/timelines/v1.8.5 docs/timelines/v1.10.2
timelines-png:
	cd test && $(GO) run ./cmd/timelines-png -out $(CURDIR)/bin/timelines-png $(addprefix $(CURDIR)/,$(TIMELINES_PNG))

# Kargo v1.11.2's own web UI and API server, for the browser proof (test/rollouts/kargoui, issue 49).
# kargo-ui builds the UI from its source in the upstream tree (bin/upstream/kargo/v1.11.2/ui, which `make
# upstream` fetches, unmodified: copied to
# bin/kargo-ui-build) as Kargo's Dockerfile does (pnpm install, then NODE_ENV=production VERSION=<tag>
# pnpm run build) into bin/kargo-ui, with the pnpm its package.json pins, which npm installs into
# bin/pnpm-<version> (not globally) when it is not there. It is skipped when bin/kargo-ui.stamp holds the
# hash of the vendored source with the pnpm and Node.js versions. kargo-api-ui builds Kargo's API server
# serving that folder (test/kargo-v1.11/cmd/kargo-api-ui). Without the UI's source (an
# $ANALYSIS_HEALTH_VENDOR without it) the UI is not built, and the browser proof skips with one line naming
# what is missing.
KARGO_UI_SRC := $(VENDOR_TREE)/kargo/v1.11.2/ui
KARGO_UI_TAG := v1.11.2
KARGO_UI ?= $(CURDIR)/bin/kargo-ui
KARGO_UI_WORK := $(CURDIR)/bin/kargo-ui-build
PNPM_VERSION := 9.0.3
PNPM_PREFIX := $(CURDIR)/bin/pnpm-$(PNPM_VERSION)
E2E_KARGO_API_UI ?= $(CURDIR)/bin/kargo-api-ui
.PHONY: kargo-ui kargo-api-ui kargo-ui-smoke
kargo-ui: upstream
	@if [ ! -f $(KARGO_UI_SRC)/package.json ]; then \
		echo "not building Kargo's UI: no $(KARGO_UI_SRC) (make upstream fetches it)"; rm -rf $(KARGO_UI) $(KARGO_UI).stamp; exit 0; fi; \
	stamp=$$( (cd $(KARGO_UI_SRC) && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; \
		echo "pnpm@$(PNPM_VERSION) node@$$(node --version) $(KARGO_UI_TAG)") | sha256sum | cut -c1-64); \
	if [ -f $(KARGO_UI)/index.html ] && [ "$$(cat $(KARGO_UI).stamp 2>/dev/null)" = "$$stamp" ]; then \
		echo "Kargo's UI is built: $(KARGO_UI) (stamp $$stamp)"; exit 0; fi; \
	set -e; \
	if [ ! -x $(PNPM_PREFIX)/bin/pnpm ]; then npm install --global --prefix $(PNPM_PREFIX) --no-audit --no-fund pnpm@$(PNPM_VERSION); fi; \
	rm -rf $(KARGO_UI_WORK) $(KARGO_UI) $(KARGO_UI).stamp; \
	cp -R $(KARGO_UI_SRC) $(KARGO_UI_WORK); chmod -R u+w $(KARGO_UI_WORK); \
	cd $(KARGO_UI_WORK); export PATH=$(PNPM_PREFIX)/bin:$$PATH; \
	pnpm install --frozen-lockfile; \
	NODE_ENV=production VERSION=$(KARGO_UI_TAG) pnpm run build > build.log || { tail -50 build.log; exit 1; }; \
	test -f build/index.html; mv build $(KARGO_UI); echo "$$stamp" > $(KARGO_UI).stamp; \
	echo "built Kargo's UI: $(KARGO_UI)"
kargo-api-ui:
	@if [ -f $(KARGO_NESTED) ]; then cd test/kargo-v1.11 && GOTOOLCHAIN=$(call toolchain,test/kargo-v1.11) $(GO) build \
		-ldflags '-X github.com/akuity/kargo/pkg/x/version.version=$(KARGO_UI_TAG)' -o $(E2E_KARGO_API_UI) ./cmd/kargo-api-ui; \
	else echo "not building Kargo's API server: $(KARGO_NESTED) is not vendored"; rm -f $(E2E_KARGO_API_UI); fi
# The browser proof's smoke test: a Stage whose verification failed, seen in Kargo's UI in headless
# Chromium (apt-get install -y chromium). E2E_KARGO_UI_SHOTS=DIR keeps the screenshots.
kargo-ui-smoke: kargo-ui kargo-api-ui
	cd test/kube-apiserver-v1.34 && GOTOOLCHAIN=$(call toolchain,test/kube-apiserver-v1.34) $(GO) build -o $(E2E_APISERVER) .
	cd test/rollouts && E2E_APISERVER=$(E2E_APISERVER) E2E_KARGO_API_UI=$(E2E_KARGO_API_UI) E2E_KARGO_UI=$(KARGO_UI) \
		$(GO) test -count=1 -tags kargo_ui -run '^TestKargoUISmoke$$' -v ./kargoui/
