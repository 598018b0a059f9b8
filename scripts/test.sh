#!/usr/bin/env bash
# Runs ragd's whole test suite on a Debian machine from scratch: installs what is missing
# (PostgreSQL, pgvector, ONNX Runtime: scripts/setup.sh), starts a throwaway PostgreSQL with
# pgvector unless RAGD_TEST_DATABASE_URL points at one, then runs go vet and go test.
# Arguments are passed to go test (for example -run TestAsk or -race).
# The stand-in models and evaluation data are expected in ../shared beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

if [ -z "${RAGD_TEST_DATABASE_URL:-}" ]; then
	# A directory the postgres account can reach when the tests run as root.
	tmp=$(mktemp -d /tmp/ragd-test.XXXXXX)
	chmod 755 "$tmp"
	trap 'scripts/pg-test.sh stop "$tmp/pg" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
	RAGD_TEST_DATABASE_URL=$(scripts/pg-test.sh start "$tmp/pg")
	export RAGD_TEST_DATABASE_URL
fi

echo "==> go vet"
go vet ./...
echo "==> go test"
go test -count=1 "$@" ./...
