#!/usr/bin/env bash
# Runs ragd's fuzz targets as fuzzers, sharing one time budget among them.
#
#   scripts/fuzz.sh [BUDGET [PACKAGE...]]
#   scripts/fuzz.sh 30s                    # what scripts/test.sh (and so CI) runs
#   scripts/fuzz.sh 2h ./request           # long fuzzing of the request decoders alone
#
# BUDGET (whole seconds, minutes or hours: 30s, 10m, 2h; default 30s) is split evenly among the
# targets of the packages (default ./extract and ./request: every parser and every request
# decoder). Every target's seed corpus (and testdata/fuzz) also runs as an ordinary test in
# `go test ./...`; this adds inputs nobody wrote by hand. A fuzzer is built with coverage
# instrumentation of its package's whole dependency tree, which is why the decoders live in
# ./request, apart from the server (Echo, bleve, the models...). Failing inputs are saved under
# PACKAGE/testdata/fuzz/ to commit.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${1:-30s}
shift || true
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./extract ./request)

# Each package's fuzzer is built once (go test -c -fuzz) and run per target, so the budget is
# spent fuzzing rather than building and linking a binary per target.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
cache=$(go env GOCACHE)/fuzz
targets=()
for pkg in "${pkgs[@]}"; do
	exe=$bin/$(basename "$pkg").test
	go test -c -fuzz . -o "$exe" "$pkg"
	corpus=$cache/$(go list "$pkg")
	for target in $(cd "$pkg" && "$exe" -test.list '^Fuzz' | grep '^Fuzz' || true); do
		targets+=("$pkg $exe $corpus $target")
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
# Go's fuzzing coordinator (go1.26) can fail a target with a bare "context deadline exceeded"
# when -fuzztime ends while a worker is mid-input (golang/go#75804, fixed in go1.27), more often
# on a loaded machine. A finding always writes its input under testdata/fuzz/TARGET; a failure
# that wrote none and says only that is the race, reported and not counted.
crashers() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | wc -l; }
for t in "${targets[@]}"; do
	read -r pkg exe corpus target <<<"$t"
	echo "--- $pkg $target"
	before=$(crashers "$pkg" "$target")
	# From the package's directory, where testdata/fuzz is; the corpus grown by earlier runs is
	# kept where go test keeps it.
	rc=0
	(cd "$pkg" && "$exe" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "${each}s" \
		-test.fuzzcachedir "$corpus") 2>&1 | tee "$bin/out" || rc=$?
	if [ "$rc" -ne 0 ]; then
		if [ "$(crashers "$pkg" "$target")" -eq "$before" ] && grep -qx '    context deadline exceeded' "$bin/out"; then
			echo "--- $target: stopped by Go's fuzz deadline race (golang/go#75804), no failing input: not a finding"
			continue
		fi
		exit "$rc"
	fi
done
