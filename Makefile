# compactd — build, test, benchmark.
GO ?= go
BIN := bin/compactd
DEMO_WAREHOUSE ?= $(CURDIR)/.cache/example-warehouse

.PHONY: all build test unit-test interop-deps s3-server db-servers db-servers-stop bench demo lint fuzz clean

all: build

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/compactd

# The whole suite: installs what the tests need (Java Paimon + pypaimon oracle,
# the loopback S3 server, PostgreSQL and MariaDB), starts the servers, runs
# every Go test, stops them.
test:
	bash scripts/test.sh

# Go tests alone, without the oracle or the S3 server (tests that need them fail).
unit-test:
	$(GO) test ./...

interop-deps:
	bash interop/install.sh

s3-server:
	bash scripts/s3-server.sh start

# PostgreSQL and MariaDB on 127.0.0.1:55432 / :53306 for the JDBC-catalog tests
# (installed with apt-get when missing); then eval "$$(bash scripts/db-servers.sh env)".
db-servers:
	bash scripts/db-servers.sh start

db-servers-stop:
	bash scripts/db-servers.sh stop

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
