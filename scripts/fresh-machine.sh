#!/usr/bin/env bash
# fresh-machine.sh checks the README's promise on a machine that has nothing: it builds a
# minimal Debian bookworm root with debootstrap, puts a clean clone of this repository in it
# (HEAD: uncommitted changes are not included) with ../shared (models and data) beside it,
# read-only, and runs the README's two commands there, as its "Two commands" block spells
# them (scripts/demo.sh, then scripts/test.sh). Any error fails it. It needs root
# (debootstrap, chroot, mounts) on a Linux machine.
#
# Usage: scripts/fresh-machine.sh [--cold] [--keep] [--expect CMD]...
#
#   --expect CMD  a command the README's block must hold, in this order (repeat for each):
#                 the run fails if the README says otherwise
#   --cold   download and build everything again: no cache of packages, Go modules, the
#            Go toolchain, ONNX Runtime or Go builds (the root tarball is still reused)
#   --keep   keep the root afterwards (its path is printed)
#
# The root runs in its own mount and PID namespaces (unshare): /proc, /sys, /dev and the
# bind mounts vanish, and every process left in it is killed, when the run ends, however it
# ends. The network settings are the machine's: its resolver, its proxy and GOPROXY
# variables, and the local certificate authorities it trusts (/usr/local/share/ca-certificates,
# which Debian's ca-certificates package adds to the root's store when setup.sh installs it).
#
# Caches, under RAGD_FRESH_CACHE (default /var/cache/ragd/fresh-machine):
#   root-<key>.tar.gz  the debootstrapped root, keyed by a hash of its inputs (suite,
#                      variant, mirror, package list, the debootstrap version, the suite's
#                      InRelease file as the mirror serves it at the start of the run, and
#                      the code of this script that builds it): a change of any of them
#                      builds a new one, and older ones are removed
#   downloads/         what the run downloads (apt's .deb files, Go modules, the Go
#                      toolchain and ONNX Runtime archives), each verified by its installer
#                      on every use (apt's signed indexes, go.sum, setup.sh's pinned hashes)
#   gobuild/           Go's build cache (content-addressed: a hit is the same compiler output
#                      for the same inputs; test results are not reused, test.sh runs -count=1)
# Runs on one machine share these caches and may run at once: apt locks its archive
# directory, so each root gets its own, with the cached packages linked in, and the packages a
# run downloads are linked back into the cache when it ends. Only building the tarball takes
# a lock.
set -euo pipefail

# One block, read whole before it runs: a change to this file during a run (a checkout, say)
# cannot change what the run does.
{
	SUITE=bookworm
	VARIANT=minbase
	MIRROR=${RAGD_FRESH_MIRROR:-http://deb.debian.org/debian}
	# Nothing beyond the minimal base: setup.sh must install everything else.
	INCLUDE=()
	CACHE=${RAGD_FRESH_CACHE:-/var/cache/ragd/fresh-machine}

	log() { printf '==> fresh-machine: %s\n' "$*"; }
	die() {
		printf 'fresh-machine.sh: error: %s\n' "$*" >&2
		exit 1
	}

	COLD=0 KEEP=0 EXPECT=()
	while (($#)); do
		case $1 in
		--cold) COLD=1 ;;
		--keep) KEEP=1 ;;
		--expect)
			(($# >= 2)) || die "--expect needs a command"
			EXPECT+=("$2")
			shift
			;;
		-h | --help)
			sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
			exit 0
			;;
		*) die "unknown argument: $1 (see --help)" ;;
		esac
		shift
	done

	((EUID == 0)) || die "needs root (debootstrap, chroot and mounts); run scripts/test.sh to test on this machine instead"
	[[ $(uname -s) == Linux ]] || die "needs Linux"
	REPO=$(cd "$(dirname "$0")/.." && pwd)
	SHARED=$(cd "$REPO/../shared" 2>/dev/null && pwd -P) ||
		die "$REPO/../shared (the models and data the tests need) is missing"
	for tool in unshare chroot git curl flock; do
		command -v "$tool" >/dev/null || die "$tool not found"
	done
	if ! command -v debootstrap >/dev/null; then
		log "installing debootstrap"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
	fi

	SECONDS=0
	mkdir -p "$CACHE/downloads"/{apt,gomod,ragd} "$CACHE/gobuild"
	commit=$(git -C "$REPO" rev-parse --short HEAD)
	if [[ -n $(git -C "$REPO" status --porcelain --untracked-files=no) ]]; then
		log "note: uncommitted changes in $REPO are not tested; the root gets commit $commit"
	fi

	# ---------------------------------------------------------------------------
	# The root tarball.

	build_root() {
		local tmp
		tmp=$(mktemp -d "$CACHE/build.XXXXXX")
		log "debootstrap $SUITE ($VARIANT) from $MIRROR: a few minutes"
		local include=()
		((${#INCLUDE[@]} == 0)) || include=("--include=$(
			IFS=,
			echo "${INCLUDE[*]}"
		)")
		if ! debootstrap --variant="$VARIANT" "${include[@]}" "$SUITE" "$tmp/root" "$MIRROR" >"$tmp/debootstrap.log" 2>&1; then
			tail -n 30 "$tmp/debootstrap.log" >&2
			rm -rf "$tmp"
			die "debootstrap failed (log above)"
		fi
		# dpkg without fsync, as in Debian's container images: a throwaway root needs no
		# durability, and the machine's disk is shared.
		echo force-unsafe-io >"$tmp/root/etc/dpkg/dpkg.cfg.d/ragd-unsafe-io"
		# The sources a Debian install has: the release, its updates and security.
		cat >"$tmp/root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb ${MIRROR%/debian}/debian-security $SUITE-security main
EOF
		rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*_* 2>/dev/null || true
		[[ -f $tmp/root/etc/resolv.conf ]] || touch "$tmp/root/etc/resolv.conf"
		tar --numeric-owner -C "$tmp/root" -czf "$tmp/root.tar.gz" .
		mv "$tmp/root.tar.gz" "$tarball"
		rm -rf "$tmp"
	}

	# The key covers every input of the tarball: the settings, build_root's own code, the
	# debootstrap that runs it, and the suite's signed index as the mirror serves it now (it
	# changes with each point release, so a root is never older than the suite it claims).
	release=$(curl -fsSL --retry 3 "$MIRROR/dists/$SUITE/InRelease") ||
		die "could not fetch $MIRROR/dists/$SUITE/InRelease (the root's packages come from there)"
	key=$({
		printf '%s\n' "$SUITE" "$VARIANT" "$MIRROR" "${INCLUDE[*]}"
		dpkg-query -W -f '${Version}\n' debootstrap
		sha256sum <<<"$release"
		declare -f build_root
	} | sha256sum | cut -c1-16)
	tarball=$CACHE/root-$SUITE-$key.tar.gz

	exec 9>"$CACHE/.lock"
	if ! flock -n 9; then
		log "waiting for another fresh-machine run to finish building the root"
		flock 9
	fi
	if [[ -f $tarball ]]; then
		log "using the cached root $tarball"
	else
		rm -rf "$CACHE"/build.* # left by an interrupted build
		build_root
		for old in "$CACHE"/root-*.tar.gz; do
			[[ $old == "$tarball" ]] || rm -f -- "$old"
		done
	fi
	flock -u 9
	exec 9>&-
	root_time=$SECONDS

	# ---------------------------------------------------------------------------
	# A root of our own, with the clone and ../shared.

	work=$(mktemp -d /var/tmp/ragd-fresh.XXXXXX)
	ROOT=$work/root
	cleanup() {
		local rc=$?
		if ((KEEP)); then
			log "kept the root in $ROOT"
		else
			# The Go module cache is read-only by design.
			chmod -R u+w "$work" 2>/dev/null || true
			rm -rf "$work"
		fi
		exit "$rc"
	}
	trap cleanup EXIT
	mkdir "$ROOT"
	tar --numeric-owner -C "$ROOT" -xzf "$tarball"
	mkdir -p "$ROOT/work/shared"
	git clone -q "$REPO" "$ROOT/work/ragd"
	archives=$ROOT/var/cache/apt/archives
	# link_debs DIR TO links DIR's .deb files into TO, keeping those TO has (a copy across
	# file systems).
	link_debs() {
		local f
		for f in "$1"/*.deb; do
			[[ -f $f && ! -e $2/${f##*/} ]] || continue
			ln -- "$f" "$2/" 2>/dev/null || cp -- "$f" "$2/"
		done
	}
	((COLD)) || link_debs "$CACHE/downloads/apt" "$archives"
	log "root ready in ${SECONDS}s (commit $commit in /work/ragd, $SHARED read-only in /work/shared)"

	# What runs inside: the README's two commands, taken from its "Two commands" block (the
	# first sh block after that heading), comments dropped, so the two cannot drift apart.
	mapfile -t commands < <(awk '
		/^## Two commands/ { section = 1; next }
		section && /^```sh/ { block = 1; next }
		block && /^```/ { exit }
		block { sub(/[ \t]*#.*/, ""); if ($0 != "") print }
	' "$ROOT/work/ragd/README.md")
	((${#commands[@]} == 2)) ||
		die "README.md's \"Two commands\" block has ${#commands[@]} commands, not 2: ${commands[*]}"
	if ((${#EXPECT[@]})) && [[ "${commands[*]}" != "${EXPECT[*]}" ]]; then
		die "README.md's \"Two commands\" are \"${commands[*]}\", not the expected \"${EXPECT[*]}\""
	fi
	{
		echo 'set -euo pipefail'
		echo 'cd /work/ragd'
		echo 'SECONDS=0'
		for c in "${commands[@]}"; do
			printf 'echo "==> fresh-machine: %s (at ${SECONDS}s)"\n' "$c"
			printf '%s\n' "$c"
		done
		echo 'echo "==> fresh-machine: the two commands took ${SECONDS}s"'
	} >"$work/inside.sh"

	# Run in new mount and PID namespaces: when the shell below (PID 1 there) exits, the kernel
	# kills whatever is left (a server, say) and drops every mount.
	mounts=$(
		cat <<'EOF'
set -euo pipefail
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm"
mount --bind "$SHARED" "$ROOT/work/shared"
mount -o remount,bind,ro "$ROOT/work/shared"
mount --bind /etc/resolv.conf "$ROOT/etc/resolv.conf"
if [[ -d /usr/local/share/ca-certificates ]]; then
	mkdir -p "$ROOT/usr/local/share/ca-certificates"
	mount --bind /usr/local/share/ca-certificates "$ROOT/usr/local/share/ca-certificates"
	mount -o remount,bind,ro "$ROOT/usr/local/share/ca-certificates"
fi
if ((COLD == 0)); then
	mkdir -p "$ROOT/root/go/pkg/mod" "$ROOT/root/.cache/ragd"
	mount --bind "$CACHE/downloads/gomod" "$ROOT/root/go/pkg/mod"
	mount --bind "$CACHE/downloads/ragd" "$ROOT/root/.cache/ragd"
	mkdir -p "$ROOT/root/.cache/go-build"
	mount --bind "$CACHE/gobuild" "$ROOT/root/.cache/go-build"
fi
env=(HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	RAGD_DEMO_PORT=$((20000 + RANDOM % 20000)))
for v in GOPROXY http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
	[[ -z ${!v:-} ]] || env+=("$v=${!v}")
done
chroot "$ROOT" /usr/bin/env -i "${env[@]}" /bin/bash /inside.sh
EOF
	)
	cp "$work/inside.sh" "$ROOT/inside.sh"
	log "running the README's commands in the root"
	export ROOT SHARED CACHE COLD
	set +e
	unshare --mount --pid --fork --propagation private bash -c "$mounts" 2>&1 | tee "$work/run.log"
	rc=${PIPESTATUS[0]}
	set -e
	((COLD)) || link_debs "$archives" "$CACHE/downloads/apt"
	cp "$work/run.log" "$CACHE/last-run.log"
	if ((rc != 0)); then
		die "the README's commands failed in a fresh $SUITE root (exit $rc; log in $CACHE/last-run.log)"
	fi
	log "passed in ${SECONDS}s (root ${root_time}s, the rest $((SECONDS - root_time))s); log in $CACHE/last-run.log"
	exit
}
