# vmrollout — see README.md ("Try it") and CONTRIBUTING.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NPX := npx --no-install
RESULTS ?= .tmp/test-results
# Extra jest arguments / test path patterns, e.g. `make test-integration ARGS=smoke-vm`
ARGS ?=

.PHONY: help image release cli chaos bench bench-queue-reading bench-rollout bench-trigger bench-scale bench-scale-real bench-gates bench-checks bench-canary bench-operator tools deps crd lint typecheck test test-unit test-workflow test-integration test-e2e test-chaos demo summary clean-results

help:
	@echo "make test              install what is missing (npm packages, tools), typecheck, lint, run every suite"
	@echo "make demo              the whole stack on loopback (Temporal dev server + Web UI, kube-apiserver, 3 VictoriaMetrics zones,"
	@echo "                        vmagent, vmauth, zone simulator, worker, trigger); applies a sample VMDistributedCluster, bumps its"
	@echo "                        version and shows the rollout zone by zone; stays up until Ctrl-C"
	@echo "make cli               build the kubectl plugin, dist/kubectl-vmdc.cjs (copy it to the PATH as kubectl-vmdc: kubectl vmdc)"
	@echo "make tools             install the real binaries into \$${VMROLLOUT_CACHE:-~/.cache/vmrollout}/tools"
	@echo "make release VERSION=x.y.z  image archive + digest + SBOM, packaged chart, plugin + krew manifest, checksums (docs/releasing.md)"
	@echo "make image             the worker and trigger image without a Docker engine (buildah, mmdebstrap: Debian trixie,"
	@echo "                        Node 22) as localhost/vmrollout:<version> (scripts/buildah.sh images) and .tmp/vmrollout-image.oci.tar"
	@echo "make deps              npm ci when node_modules is missing or older than package-lock.json"
	@echo "make test-unit | test-workflow | test-integration | test-e2e | test-chaos | test-operator  [ARGS=<pattern>]"
	@echo "make typecheck | lint | crd"
	@echo "make bench             every benchmark (JSON in .tmp/bench/, figures in docs/benchmarks.md); one: make bench-<name>"
	@echo "                        (queue-reading, rollout, trigger, scale, scale-real, operator); BENCH_ARGS=--quick for short runs"
	@echo "make chaos             the chaos campaign (3 rollouts under worker kills, restarts, API and scrape faults; JSON in"
	@echo "                        .tmp/chaos/, figures in docs/reliability.md); replay: CHAOS_SEED=<seed>; CHAOS_ARGS=--kills=N ..."

tools:
	scripts/install-tools.sh

image:
	scripts/image.sh

# make release VERSION=x.y.z: every artefact in dist/release/x.y.z (docs/releasing.md).
release: deps tools
	scripts/release.sh "$(VERSION)"

# npm writes node_modules/.package-lock.json on every install: it is the "installed at" stamp.
deps: node_modules/.package-lock.json
node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

crd: deps
	npm run gen:crd

# ESLint, then the layers and import cycles (dependency-cruiser: .dependency-cruiser.cjs, docs/architecture.md).
lint: deps
	npm run --silent lint

typecheck: deps
	$(NPX) tsc --noEmit

test:
	@VMROLLOUT_RESULTS=$(RESULTS) scripts/test-all.sh; rc=$$?; node scripts/test-summary.mjs $(RESULTS) && exit $$rc

summary:
	@node scripts/test-summary.mjs $(RESULTS)

test-unit: deps
	scripts/jest-project.sh unit $(ARGS)

test-workflow: deps tools
	scripts/jest-project.sh workflow $(ARGS)

test-integration: deps tools
	scripts/jest-project.sh integration $(ARGS)

test-e2e: deps tools
	scripts/jest-project.sh e2e $(ARGS)

test-chaos: deps tools
	scripts/jest-project.sh chaos $(ARGS)

# vmrollout against the real VictoriaMetrics operator (test/operator/): inside a network namespace
# of its own (test/infra/harness/operator-bed/in-netns.sh: root or user namespaces), one file at a time.
.PHONY: test-operator
test-operator: deps tools
	scripts/jest-project.sh operator $(ARGS)

# The demo prints the plugin's commands (dist/kubectl-vmdc.cjs) next to the temporal ones.
demo: deps tools cli
	$(NPX) tsx scripts/demo.ts

cli: deps
	npm run --silent build:cli

CHAOS_ARGS ?=
chaos: deps tools
	@mkdir -p .tmp/chaos && BENCH_COMMAND="make $@ CHAOS_ARGS='$(CHAOS_ARGS)'" $(NPX) tsx test/infra/chaos/campaign.ts $(CHAOS_ARGS)

clean-results:
	rm -rf $(RESULTS)

# Benchmarks print one JSON document each (also written to .tmp/bench/<name>.json); bench/*.ts are
# pure, bench/stack/*.ts start the real stack (tools needed).
BENCH_ARGS ?=
bench: bench-queue-reading bench-rollout bench-trigger bench-scale bench-scale-real bench-gates bench-checks bench-canary bench-operator

# Each document names the command that made it (bench/support/provenance.ts).
bench-queue-reading: deps
	@mkdir -p .tmp/bench && BENCH_COMMAND="make $@ BENCH_ARGS='$(BENCH_ARGS)'" $(NPX) tsx bench/queue-reading.ts $(BENCH_ARGS) | tee .tmp/bench/queue-reading.json

bench-rollout bench-trigger bench-scale bench-scale-real bench-gates bench-checks bench-canary: bench-%: deps tools
	@BENCH_COMMAND="make $@ BENCH_ARGS='$(BENCH_ARGS)'" $(NPX) tsx bench/stack/$*.ts $(BENCH_ARGS)

# The real-operator bed's start-up and a rollout under the real operator, in the bed's network namespace.
bench-operator: deps tools
	@BENCH_COMMAND="make $@ BENCH_ARGS='$(BENCH_ARGS)'" test/infra/harness/operator-bed/in-netns.sh $(NPX) tsx bench/stack/operator.ts $(BENCH_ARGS)
