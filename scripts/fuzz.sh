#!/usr/bin/env bash
# Runs ragd's fuzz targets as fuzzers, sharing one time budget among them.
#
#   scripts/fuzz.sh [BUDGET [PACKAGE...]]
#   scripts/fuzz.sh 30s ./extract          # what scripts/test.sh (and so CI) runs
#   scripts/fuzz.sh 2h ./extract ./server  # long fuzzing: every parser and request decoder
#
# BUDGET (whole seconds, minutes or hours: 30s, 10m, 2h; default 30s) is split evenly among the targets of the packages
# (default ./extract). Every target's seed corpus (and testdata/fuzz) also runs as an ordinary
# test in `go test ./...`; this adds inputs nobody wrote by hand. A fuzzer is built with coverage
# instrumentation of its package's whole dependency tree: cheap for ./extract, about a quarter of
# an hour on a busy 2-core machine for ./server (Echo, bleve, the models...), which is why CI
# fuzzes only ./extract. Failing inputs are saved under PACKAGE/testdata/fuzz/ to commit.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${1:-30s}
shift || true
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./extract)

targets=()
for pkg in "${pkgs[@]}"; do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		targets+=("$pkg $target")
	done
done
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in ${pkgs[*]}" >&2; exit 1; }

# Per-target time from the budget: a number of seconds, minutes or hours (30s, 10m, 2h).
case "$budget" in
*h) secs=$((${budget%h} * 3600)) ;;
*m) secs=$((${budget%m} * 60)) ;;
*s) secs=${budget%s} ;;
*) echo "fuzz budget $budget: want a whole number of seconds, minutes or hours (30s, 10m, 2h)" >&2; exit 2 ;;
esac
each=$((secs / ${#targets[@]}))
[ "$each" -ge 1 ] || each=1
echo "==> go fuzz: ${#targets[@]} targets, ${budget} in all (${each}s each)"
for t in "${targets[@]}"; do
	read -r pkg target <<<"$t"
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "${each}s" "$pkg"
done
