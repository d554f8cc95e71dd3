# surf: two commands from a fresh clone.
#   make demo   set up the machine, then run the main job on the bundled demo site
#   make test   set up the machine, then vet and run every test with -race
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin:$(shell go env GOPATH 2>/dev/null)/bin
GO ?= go
SURF := bin/surf
OTELCOL := bin/otelcol-surf
FUZZTIME ?= 15s

.PHONY: all build setup demo test vet lint fuzz bench clean

all: build

build:
	$(GO) build -o $(SURF) ./cmd/surf

# setup installs what surf needs: as root on Debian/Ubuntu also the system
# packages (chromium and its headless shell, nodejs, npm, bubblewrap); always the Playwright driver
# from the npm registry, the TypeScript MCP client the tests drive
# surf serve with (testdata/mcpclient) and Playwright MCP, the peer that
# surf bench actions measures surf against (testdata/pwmcp), and the
# orchestrator examples the tests run (examples/openai-agents,
# examples/vercel-ai) and the official MCP conformance suite the tests run
# against surf serve (testdata/mcpconformance); their versions are pinned by the committed
# package-lock.json files. As root with apt-get, also promtool (Debian's
# prometheus package), which the metrics tests check /metrics with (they
# fail without it under CI=true). Also the OpenTelemetry Collector the
# trace test exports to (bin/otelcol-surf, below). Safe to run again.
setup: build $(OTELCOL)
	@if [ "$$(id -u)" = 0 ]; then $(SURF) install --with-deps; else $(SURF) install; fi
	@if [ "$$(id -u)" = 0 ] && ! command -v promtool >/dev/null && command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; }; fi
	npm ci --prefix testdata/mcpclient --no-audit --no-fund
	npm ci --prefix testdata/pwmcp --no-audit --no-fund
	npm ci --prefix examples/openai-agents --no-audit --no-fund
	npm ci --prefix examples/vercel-ai --no-audit --no-fund
	npm ci --prefix testdata/mcpconformance --no-audit --no-fund

# bin/otelcol-surf: a minimal OpenTelemetry Collector (OTLP receiver, file
# exporter) from the Go module proxy, for TestTracesReachACollector. It is
# a module of its own (internal/tools/otelcol, versions pinned by its
# go.sum), so surf's go.mod does not carry the collector; make rebuilds it
# only when that module's files change (a few minutes on 2 cores).
OTELCOL_SRC := internal/tools/otelcol/go.mod internal/tools/otelcol/go.sum internal/tools/otelcol/main.go
$(OTELCOL): $(OTELCOL_SRC)
	@mkdir -p $(@D)
	cd internal/tools/otelcol && $(GO) build -trimpath -o $(abspath $@).tmp .
	mv -f $@.tmp $@

demo: setup
	$(SURF) demo

vet:
	$(GO) vet ./...

# staticcheck (honnef.co/go/tools, pinned here, from the Go module proxy)
# on everything but the Playwright fork, whose upstream style it keeps.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) $$($(GO) list ./... | grep -v /third_party/)

test: setup vet
	$(GO) test -race -timeout 45m ./...
	$(MAKE) fuzz

# Short runs of the fuzzers of parsers and dispatchers, on top of their
# seed corpora (which the plain test run already checks). The websurfer
# dispatcher fuzzer drives a real browser; its seeds run with the tests.
# .ci/fuzz.sh tells a finding from Go 1.26's end-of-fuzztime deadline race.
FUZZ_PKGS := ./board ./policy ./sandbox ./som ./tools ./perception ./journal ./internal/textcut ./internal/tokens ./internal/jpegpatch ./internal/snapjson ./internal/cdpcbor ./internal/termsafe ./internal/taskref ./internal/report ./cmd/surf/internal/daemon ./cmd/surf/internal/mcpserver ./cmd/surf/internal/shell ./cmd/surf/internal/policycheck
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash .ci/fuzz.sh $(FUZZ_PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 10x ./sandbox ./som ./internal/jpegpatch ./internal/snapjson

clean:
	rm -rf bin surf-demo
