# compactd — build, test, benchmark.
GO ?= go
BIN := bin/compactd
DEMO_WAREHOUSE ?= $(CURDIR)/.cache/example-warehouse

.PHONY: all build test unit-test interop-deps s3-server bench demo lint fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/compactd

# The whole suite: installs what the tests need (Java Paimon + pypaimon oracle,
# the loopback S3 server), starts the server, runs every Go test, stops it.
test:
	bash scripts/test.sh

# Go tests alone, without the oracle or the S3 server (tests that need them fail).
unit-test:
	$(GO) test ./...

interop-deps:
	bash interop/install.sh

s3-server:
	bash scripts/s3-server.sh start

bench:
	bash scripts/bench.sh

# Builds the bundled example warehouse with compactd's own writer, then shows it.
demo: build
	bash scripts/demo.sh "$(DEMO_WAREHOUSE)"

# gofmt, go vet, golangci-lint (.golangci.yml: depguard layering, errorlint, sloglint, unused).
lint:
	bash scripts/lint.sh

fuzz:
	bash scripts/fuzz.sh

clean:
	rm -rf bin .cache
