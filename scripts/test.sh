#!/usr/bin/env bash
# Runs ragd's whole test suite on a Debian machine from scratch: installs what is missing
# (Go, PostgreSQL, pgvector, ONNX Runtime, Chromium: scripts/setup.sh), starts a throwaway PostgreSQL with
# pgvector through ragd's own private-cluster code (`ragd db start`) unless
# RAGD_TEST_DATABASE_URL points at one, then runs go vet and go test.
# Arguments are passed to go test (for example -run TestAsk or -race).
# The stand-in models and evaluation data are expected in ../shared beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --browser
# setup.sh links go into /usr/local/bin; this covers a PATH without it.
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH
# The page test saves its screenshots here.
export RAGD_TEST_ARTIFACTS=${RAGD_TEST_ARTIFACTS:-$PWD/test-artifacts}

echo "==> building ragd"
mkdir -p bin
go build -o bin/ragd ./cmd/ragd

if [ -z "${RAGD_TEST_DATABASE_URL:-}" ]; then
	# A directory the postgres account can reach when the tests run as root.
	tmp=$(mktemp -d /tmp/ragd-test.XXXXXX)
	chmod 755 "$tmp"
	trap 'bin/ragd db stop --dir "$tmp/pg" --force --log-level warn || true; rm -rf "$tmp"' EXIT
	echo "==> starting a throwaway PostgreSQL in $tmp/pg"
	# Speed over durability: the cluster is thrown away.
	RAGD_TEST_DATABASE_URL=$(bin/ragd db start --dir "$tmp/pg" --log-level warn \
		--set fsync=off --set synchronous_commit=off --set full_page_writes=off --set max_connections=200)
	export RAGD_TEST_DATABASE_URL
fi

echo "==> go vet"
go vet ./...
echo "==> go test"
go test -count=1 "$@" ./...
# Seed corpora ran above as ordinary tests. Then bounded fuzzing: every parser (./extract) and
# every request decoder (./request) for RAGD_FUZZTIME in all, shared among the targets (30s by
# default; 0 skips). Long fuzzing: scripts/fuzz.sh (see the README).
fuzztime=${RAGD_FUZZTIME:-30s}
if [ "$fuzztime" != "0" ]; then
	scripts/fuzz.sh "$fuzztime" ./extract ./request
fi
