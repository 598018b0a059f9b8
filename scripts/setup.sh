#!/usr/bin/env bash
# setup.sh installs the system dependencies ragd needs on a Debian-like
# machine (written for Debian bookworm; trixie works too):
#
#   1. Go                    the release go.mod needs, unless a Go as new is on
#                            PATH: the module golang.org/toolchain from the Go
#                            module proxy ($GOPROXY), checked against its pinned
#                            go.sum hash, installed in /usr/local/go (with links
#                            in /usr/local/bin)
#   2. PostgreSQL server     postgresql, postgresql-contrib
#   3. C toolchain for cgo   gcc, libc6-dev
#   4. pgvector              the distro package when apt has one, otherwise
#                            built from Debian trixie's source package
#   5. ONNX Runtime          libonnxruntime.so.1 from the onnxruntime-node npm
#                            package (npm pack; npm from Debian when missing),
#                            installed into /usr/local/lib
#
# It is idempotent: components that are already present are left alone, so a
# second run takes seconds. It never starts a database server (ragd runs its
# own clusters: `ragd db start`, or any ragd command).
#
# Usage: scripts/setup.sh [--check] [--browser] [--only COMPONENTS]
#
#   --check     only report what is missing; exit 1 if anything is.
#   --browser   also Chromium (Debian's chromium), for the test that drives
#               the chat page in a real browser; scripts/test.sh asks for it.
#   --only      only these comma-separated components: go, postgresql (with
#               pgvector), gcc, onnxruntime (the Dockerfile takes ONNX Runtime
#               this way).
#
# Environment:
#   RAGD_SETUP_FORCE   comma-separated components to reinstall even when
#                      present: pgvector, onnxruntime, or all.
#   RAGD_ORT_VERSION   another onnxruntime-node release; only accepted
#                      together with RAGD_ORT_SHA1 (its npm dist.shasum).
#   RAGD_GO_H1         the go.sum hash of the Go toolchain module on a
#                      platform setup.sh has no pin for (not linux-amd64).
#   GOPROXY            where the Go toolchain comes from (default
#                      https://proxy.golang.org), as for the go command.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)

# The ONNX Runtime release ragd is built and tested against, and the sha1 of
# its npm tarball (npm view onnxruntime-node@1.30.0 dist.shasum).
ORT_VERSION=1.30.0
ORT_SHA1=8d4c4a75f31088ec846f08cccb62f3272a7bf44a

# The Go release installed when no Go as new as go.mod's is present, and the
# go.sum hash of its module golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch
# per architecture: the "h1:" SHA-256 over the zip's files, as sum.golang.org
# serves it. The amd64 hash was computed from the zip the proxy serves; all of
# its 11,518 files are byte-identical to the go1.26.8 linux/amd64 release
# installed on the project's machines, save the go.mod files the module renames
# to _go.mod and go.env's GOTOOLCHAIN default.
GO_VERSION=1.26.8
declare -A GO_H1=([amd64]=h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=)
GO_ROOT=/usr/local/go

# PostgreSQL major version assumed when none is installed and apt cannot tell
# which one the "postgresql" package would bring (bookworm ships 15).
PG_MAJOR_DEFAULT=15

# Debian source suite that packages pgvector for building on bookworm.
PGVECTOR_SRC_SUITE=trixie

ORT_LIBDIR=/usr/local/lib
HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/ragd

log() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
warn() { printf 'setup.sh: warning: %s\n' "$*" >&2; }
die() {
	printf 'setup.sh: error: %s\n' "$*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

CHECK=0
BROWSER=0
ONLY=
while (($#)); do
	arg=$1
	shift
	case $arg in
	--check) CHECK=1 ;;
	--browser) BROWSER=1 ;;
	--only)
		(($#)) || die "--only needs a list of components"
		ONLY=$1
		shift
		;;
	--only=*) ONLY=${arg#--only=} ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument: $arg (see --help)" ;;
	esac
done
for c in ${ONLY//,/ }; do
	[[ $c == @(go|postgresql|gcc|onnxruntime) ]] ||
		die "--only: unknown component $c (go, postgresql, gcc, onnxruntime)"
done

# wanted reports whether component $1 is to be installed (see --only).
wanted() { [[ -z $ONLY || ,$ONLY, == *,"$1",* ]]; }

if [[ -n ${RAGD_ORT_VERSION:-} && $RAGD_ORT_VERSION != "$ORT_VERSION" ]]; then
	[[ -n ${RAGD_ORT_SHA1:-} ]] ||
		die "RAGD_ORT_VERSION=$RAGD_ORT_VERSION needs RAGD_ORT_SHA1 too (npm view onnxruntime-node@$RAGD_ORT_VERSION dist.shasum); the default is $ORT_VERSION"
	warn "using onnxruntime $RAGD_ORT_VERSION instead of the tested $ORT_VERSION"
	ORT_VERSION=$RAGD_ORT_VERSION
	ORT_SHA1=$RAGD_ORT_SHA1
fi
ORT_TARGET=$ORT_LIBDIR/libonnxruntime.so.$ORT_VERSION
ORT_LINK=$ORT_LIBDIR/libonnxruntime.so.1
ORT_TGZ=$CACHE_DIR/onnxruntime-node-$ORT_VERSION.tgz

forced() {
	[[ ,${RAGD_SETUP_FORCE:-}, == *,"$1",* || ,${RAGD_SETUP_FORCE:-}, == *,all,* ]]
}

# as_root runs a command as root: directly when we are root, else via sudo.
as_root() {
	if ((EUID == 0)); then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*': run this script as root or install sudo"
	fi
}

APT_UPDATED=0
apt_update_once() {
	command -v apt-get >/dev/null 2>&1 ||
		die "apt-get not found: this script supports Debian-based systems only; install the components listed in --help by hand"
	if ((APT_UPDATED == 0)); then
		note "apt-get update"
		as_root apt-get update -qq
		APT_UPDATED=1
	fi
}

apt_install() {
	apt_update_once
	note "apt-get install $*"
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# TMPDIRS are removed on exit, whatever happens.
TMPDIRS=()
cleanup() {
	local d
	for d in "${TMPDIRS[@]}"; do
		[[ -n $d ]] && rm -rf -- "$d"
	done
}
trap cleanup EXIT

# new_tmpdir creates a temporary directory, removed on exit, and stores its
# path in TMP (not printed: TMPDIRS must be updated in this shell).
new_tmpdir() {
	TMP=$(mktemp -d -t "ragd-setup-$1.XXXXXX")
	TMPDIRS+=("$TMP")
}

# ---------------------------------------------------------------------------
# Detection. Each function prints what it found and fails when it is missing.

has_server_binaries() { [[ -x $1/postgres && -x $1/initdb && -x $1/pg_ctl ]]; }

# pg_bindir prints the bin directory of the installed PostgreSQL server:
# pg_config's, else the newest /usr/lib/postgresql/*/bin, else the one in PATH.
# (Debian's /usr/bin/pg_config can belong to a client-only install, hence the
# check for the server binaries.)
pg_bindir() {
	local d
	if command -v pg_config >/dev/null 2>&1 &&
		d=$(pg_config --bindir 2>/dev/null) && has_server_binaries "$d"; then
		printf '%s\n' "$d"
		return 0
	fi
	while read -r d; do
		has_server_binaries "$d" && {
			printf '%s\n' "$d"
			return 0
		}
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV)
	if d=$(command -v postgres 2>/dev/null) && has_server_binaries "${d%/*}"; then
		printf '%s\n' "${d%/*}"
		return 0
	fi
	return 1
}

# pg_major prints the major version of the server in bin dir $1.
pg_major() {
	local v
	v=$("$1/postgres" --version) || return 1 # "postgres (PostgreSQL) 15.18 (Debian ...)"
	v=${v#*) }
	printf '%s\n' "${v%%[!0-9]*}"
}

# pg_config_for prints the pg_config matching the server in bin dir $1.
pg_config_for() {
	if [[ -x $1/pg_config ]]; then
		printf '%s\n' "$1/pg_config"
	else
		command -v pg_config
	fi
}

# apt_pg_major prints the major version the "postgresql" package would install.
apt_pg_major() {
	local v
	v=$(apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n1) || true
	printf '%s\n' "${v:-$PG_MAJOR_DEFAULT}"
}

# go_min prints the Go release go.mod asks for.
go_min() {
	sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$REPO/go.mod"
}

# version_ge reports whether version $1 >= $2 (dotted numbers).
version_ge() {
	[[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1) == "$2" ]]
}

# go_at prints the release of the go program $1 if it is at least go.mod's.
go_at() {
	local v
	# From /, with GOTOOLCHAIN=local, so that the program reports itself
	# rather than switching to the toolchain go.mod names.
	v=$(cd / && GOTOOLCHAIN=local "$1" version 2>/dev/null) || return 1
	v=${v#go version go}
	v=${v%% *}
	version_ge "$v" "$(go_min)" && printf '%s\n' "$v"
}

# find_go prints "release path" of a Go as new as go.mod's: on PATH, else in
# $GO_ROOT.
find_go() {
	local g v
	for g in "$(command -v go 2>/dev/null)" "$GO_ROOT/bin/go"; do
		[[ -n $g && -x $g ]] || continue
		v=$(go_at "$g") && {
			printf '%s %s\n' "$v" "$g"
			return 0
		}
	done
	return 1
}

have_cc() {
	command -v gcc >/dev/null 2>&1 &&
		printf 'int main(void) { return 0; }\n' | gcc -x c -o /dev/null - >/dev/null 2>&1
}

# pgvector_version prints the installed pgvector version for pg_config $1.
pgvector_version() {
	local share lib
	share=$("$1" --sharedir) && lib=$("$1" --pkglibdir) || return 1
	[[ -f $share/extension/vector.control && -f $lib/vector.so ]] || return 1
	sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$share/extension/vector.control"
}

have_chromium() { command -v chromium >/dev/null 2>&1; }

ort_present() {
	local link
	link=$(readlink "$ORT_LINK" 2>/dev/null) || return 1
	[[ -f $ORT_TARGET && ($link == "${ORT_TARGET##*/}" || $link == "$ORT_TARGET") ]]
}

# ---------------------------------------------------------------------------
# --check

if ((CHECK)); then
	missing=0
	report() { printf '    %-18s %s\n' "$1" "$2"; }
	if ! wanted go; then :; elif g=$(find_go); then report go "ok (${g% *}, ${g#* })"; else
		report go "MISSING (go.mod needs $(go_min))"
		missing=1
	fi
	if ! wanted postgresql; then :; elif bindir=$(pg_bindir); then
		major=$(pg_major "$bindir")
		report postgresql "ok ($major, $bindir)"
		if v=$(pgvector_version "$(pg_config_for "$bindir")"); then
			report pgvector "ok ($v)"
		else
			report pgvector MISSING
			missing=1
		fi
	else
		report postgresql MISSING
		report pgvector "MISSING (needs postgresql)"
		missing=1
	fi
	if ! wanted gcc; then :; elif have_cc; then report gcc ok; else
		report gcc MISSING
		missing=1
	fi
	if ! wanted onnxruntime; then :; elif ort_present; then report onnxruntime "ok ($ORT_VERSION, $ORT_TARGET)"; else
		report onnxruntime "MISSING ($ORT_TARGET)"
		missing=1
	fi
	if ((BROWSER)); then
		if have_chromium; then report chromium "ok ($(command -v chromium))"; else
			report chromium MISSING
			missing=1
		fi
	fi
	if ((missing)); then
		log "Some components are missing; run scripts/setup.sh to install them."
		exit 1
	fi
	log "Everything is installed."
	exit 0
fi

# ---------------------------------------------------------------------------
# Installation.

INSTALLED=()
PRESENT=()

# stop_new_clusters stops Debian clusters that came online since $1 (a list of
# "version/name" lines): installing the postgresql package creates and starts
# a "main" cluster, and this script promises not to leave a database running.
stop_new_clusters() {
	local before=$1 ver name _ status _rest
	command -v pg_lsclusters >/dev/null 2>&1 || return 0
	while read -r ver name _ status _rest; do
		[[ $status == online* ]] || continue
		grep -qxF "$ver/$name" <<<"$before" && continue
		note "stopping cluster $ver/$name started by the package install (ragd runs its own)"
		as_root pg_ctlcluster "$ver" "$name" stop
	done < <(pg_lsclusters -h 2>/dev/null)
}

# all_present reports whether every component is installed already.
all_present() {
	local b
	{ ! wanted go || find_go >/dev/null; } &&
		{ ! wanted postgresql || { b=$(pg_bindir) && pgvector_version "$(pg_config_for "$b")" >/dev/null; }; } &&
		{ ! wanted gcc || have_cc; } && { ! wanted onnxruntime || ort_present; } &&
		{ ((!BROWSER)) || have_chromium; }
}

# Fail before downloading anything if we will need root and cannot get it.
if ((EUID != 0)) && ! command -v sudo >/dev/null 2>&1 &&
	{ [[ -n ${RAGD_SETUP_FORCE:-} ]] || ! all_present; }; then
	die "something needs installing (see --check) and that needs root: run this script as root or install sudo"
fi

SECONDS=0

# go_proxy prints the first proxy URL of $GOPROXY (default proxy.golang.org).
go_proxy() {
	local e entries
	IFS=',|' read -ra entries <<<"${GOPROXY:-https://proxy.golang.org,direct}"
	for e in "${entries[@]}"; do
		case $e in
		http://* | https://*)
			printf '%s\n' "${e%/}"
			return 0
			;;
		off) break ;;
		esac
	done
	die "GOPROXY=${GOPROXY:-} names no proxy to fetch the Go toolchain from; set it to one (the default is https://proxy.golang.org), or install Go $(go_min) yourself"
}

# dirhash prints the go.sum hash ("h1:") of the files under directory $1, named
# by their paths relative to it: the SHA-256 of the lines "<sha256>  <name>",
# sorted by name (golang.org/x/mod/sumdb/dirhash.Hash1).
dirhash() {
	local hex
	hex=$(cd "$1" && find . -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
	printf 'h1:%s\n' "$(printf '%b' "$(sed 's/../\\x&/g' <<<"$hex")" | base64)"
}

install_go() {
	local arch h1 version zip tmp root f want
	case $(uname -m) in
	x86_64 | amd64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no Go toolchain for $(uname -m) here; install Go $(go_min) yourself" ;;
	esac
	version_ge "$GO_VERSION" "$(go_min)" ||
		die "go.mod needs Go $(go_min), newer than the Go $GO_VERSION setup.sh installs: update GO_VERSION and GO_H1 in scripts/setup.sh"
	h1=${RAGD_GO_H1:-${GO_H1[$arch]:-}}
	[[ -n $h1 ]] ||
		die "no pinned hash for Go $GO_VERSION on linux-$arch: set RAGD_GO_H1 to the h1: hash of golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch (https://sum.golang.org/lookup/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-$arch), or install Go $(go_min) yourself"
	if [[ -e $GO_ROOT ]]; then
		die "$GO_ROOT holds a Go older than go.mod's $(go_min); remove it (setup.sh then installs Go $GO_VERSION there) or put a Go >= $(go_min) first on PATH"
	fi
	local need=()
	command -v curl >/dev/null 2>&1 || need+=(curl)
	[[ -f /etc/ssl/certs/ca-certificates.crt ]] || need+=(ca-certificates)
	command -v unzip >/dev/null 2>&1 || need+=(unzip)
	if ((${#need[@]})); then
		apt_install "${need[@]}"
	fi

	version=v0.0.1-go$GO_VERSION.linux-$arch
	zip=$CACHE_DIR/go$GO_VERSION.linux-$arch.zip
	new_tmpdir go
	tmp=$TMP
	if [[ -f $zip ]]; then
		note "using cached $zip"
	else
		note "downloading golang.org/toolchain@$version from $(go_proxy) (~70 MB)"
		curl -fsSL --retry 3 -o "$tmp/go.zip" "$(go_proxy)/golang.org/toolchain/@v/$version.zip" ||
			die "could not download the Go toolchain from $(go_proxy)"
		mkdir -p "$CACHE_DIR"
		mv -- "$tmp/go.zip" "$zip"
	fi
	unzip -q "$zip" -d "$tmp/x" || {
		rm -f -- "$zip"
		die "$zip is not a zip file; removed it, run again"
	}
	f=$(dirhash "$tmp/x")
	if [[ $f != "$h1" ]]; then
		rm -f -- "$zip"
		die "the Go toolchain from $(go_proxy) has hash $f, want $h1; removed it, refusing to install it"
	fi
	root=$tmp/x/golang.org/toolchain@$version
	# The module renames go.mod files to _go.mod; put them back, as the go
	# command does when it runs a toolchain module.
	while IFS= read -r -d '' f; do
		cp -- "$f" "${f%/_go.mod}/go.mod"
	done < <(find "$root" -name _go.mod -print0)
	chmod -R a+rX "$root"
	as_root mv -- "$root" "$GO_ROOT"
	for f in go gofmt; do
		[[ -e /usr/local/bin/$f ]] || as_root ln -s "$GO_ROOT/bin/$f" "/usr/local/bin/$f"
	done
}

if wanted go; then
	log "[1/5] Go (at ${SECONDS}s)"
	if g=$(find_go); then
		note "found Go ${g% *} at ${g#* }"
		PRESENT+=("go ${g% *}")
	else
		install_go
		g=$(find_go) || die "Go $GO_VERSION was installed in $GO_ROOT but does not run"
		note "installed Go ${g% *} in $GO_ROOT"
		[[ $(command -v go) == /usr/local/bin/go || $(command -v go) == "$GO_ROOT/bin/go" ]] ||
			warn "another go comes first on PATH ($(command -v go)): put $GO_ROOT/bin first"
		INSTALLED+=("go ${g% *}")
	fi
fi

if wanted postgresql; then
	log "[2/5] PostgreSQL server (at ${SECONDS}s)"
	if bindir=$(pg_bindir); then
		PG_MAJOR=$(pg_major "$bindir")
		note "found PostgreSQL $PG_MAJOR in $bindir"
		PRESENT+=("postgresql $PG_MAJOR")
	else
		before=$(pg_lsclusters -h 2>/dev/null | awk '$4 ~ /^online/ {print $1 "/" $2}') || true
		apt_install postgresql postgresql-contrib
		stop_new_clusters "$before"
		bindir=$(pg_bindir) || die "PostgreSQL was installed but its server binaries were not found"
		PG_MAJOR=$(pg_major "$bindir")
		note "installed PostgreSQL $PG_MAJOR in $bindir"
		INSTALLED+=("postgresql $PG_MAJOR")
	fi
	PG_CONFIG=$(pg_config_for "$bindir")
fi

if wanted gcc; then
	log "[3/5] C toolchain (cgo) (at ${SECONDS}s)"
	if have_cc; then
		note "gcc works"
		PRESENT+=(gcc)
	else
		apt_install gcc libc6-dev
		have_cc || die "gcc was installed but cannot compile a test program"
		INSTALLED+=(gcc)
	fi
fi

# build_pgvector builds pgvector from the Debian $PGVECTOR_SRC_SUITE source
# package in a temporary directory, using a private apt configuration so the
# machine's own sources and package lists are left untouched.
build_pgvector() {
	local need=() inc tmp src
	# Debian ships pgxs.mk in postgresql-client-N, without the server headers:
	# look for the headers themselves.
	{ inc=$("$PG_CONFIG" --includedir-server 2>/dev/null) && [[ -f $inc/postgres.h ]]; } ||
		need+=("postgresql-server-dev-$PG_MAJOR")
	command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
	command -v make >/dev/null 2>&1 || need+=(make)
	if ((${#need[@]})); then
		apt_install "${need[@]}"
	fi

	new_tmpdir pgvector
	tmp=$TMP
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
	printf 'deb-src http://deb.debian.org/debian %s main\n' "$PGVECTOR_SRC_SUITE" >"$tmp/sources.list"
	# apt downloads as the unprivileged _apt user when run as root.
	if ((EUID == 0)) && id _apt >/dev/null 2>&1; then
		chown -R _apt "$tmp"
	fi
	local apt_opts=(
		-qq
		-o "Dir::Etc::sourcelist=$tmp/sources.list"
		-o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$tmp/lists"
		-o "Dir::Cache=$tmp/cache"
	)
	note "fetching pgvector source from Debian $PGVECTOR_SRC_SUITE"
	apt-get "${apt_opts[@]}" update
	(cd "$tmp/src" && apt-get "${apt_opts[@]}" source pgvector >/dev/null)
	src=$(compgen -G "$tmp/src/pgvector-*/" | head -n1) || die "apt-get source pgvector produced no source tree"
	note "building ${src%/} against $PG_CONFIG"
	# OPTFLAGS= drops pgvector's default -march=native, as Debian's package
	# does, so the library keeps working if the machine's CPU changes.
	make -s -C "$src" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS= >/dev/null
	as_root make -s -C "$src" install PG_CONFIG="$PG_CONFIG" OPTFLAGS= >/dev/null
}

if wanted postgresql; then
	log "[4/5] pgvector (at ${SECONDS}s)"
	if ! forced pgvector && v=$(pgvector_version "$PG_CONFIG"); then
		note "found pgvector $v in $("$PG_CONFIG" --sharedir)/extension"
		PRESENT+=("pgvector $v")
	else
		apt_update_once
		pkg=postgresql-$PG_MAJOR-pgvector
		candidate=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
		if [[ -n $candidate && $candidate != "(none)" ]]; then
			if forced pgvector; then
				apt_install --reinstall "$pkg"
			else
				apt_install "$pkg"
			fi
		else
			note "$pkg is not packaged here; building it from source"
			build_pgvector
		fi
		v=$(pgvector_version "$PG_CONFIG") || die "pgvector was installed but vector.control/vector.so are not where $PG_CONFIG says"
		note "installed pgvector $v"
		INSTALLED+=("pgvector $v")
	fi
fi

# fetch_ort makes sure $ORT_TGZ holds the verified onnxruntime-node tarball.
fetch_ort() {
	local tmp got
	if [[ -f $ORT_TGZ ]]; then
		got=$(sha1sum "$ORT_TGZ" | cut -d' ' -f1)
		if [[ $got == "$ORT_SHA1" ]]; then
			note "using cached $ORT_TGZ"
			return 0
		fi
		warn "cached $ORT_TGZ has sha1 $got, want $ORT_SHA1; downloading it again"
		rm -f -- "$ORT_TGZ"
	fi
	new_tmpdir ort-download
	tmp=$TMP
	# npm fetches it from the registry it is configured with.
	command -v npm >/dev/null 2>&1 || apt_install npm
	note "downloading onnxruntime-node@$ORT_VERSION with npm (~110 MB)"
	# A private npm cache keeps the tarball from being stored twice.
	(cd "$tmp" && npm pack --silent --cache "$tmp/npm-cache" \
		"onnxruntime-node@$ORT_VERSION" >/dev/null)
	got=$(sha1sum "$tmp/onnxruntime-node-$ORT_VERSION.tgz" | cut -d' ' -f1)
	[[ $got == "$ORT_SHA1" ]] ||
		die "onnxruntime-node-$ORT_VERSION.tgz has sha1 $got, want $ORT_SHA1; refusing to install it"
	mkdir -p "$CACHE_DIR"
	mv -- "$tmp/onnxruntime-node-$ORT_VERSION.tgz" "$ORT_TGZ"
}

install_ort() {
	local arch member tmp
	case $(uname -m) in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no ONNX Runtime build in onnxruntime-node for $(uname -m)" ;;
	esac
	fetch_ort
	member=package/bin/napi-v6/linux/$arch/libonnxruntime.so.1
	new_tmpdir ort
	tmp=$TMP
	tar -xzf "$ORT_TGZ" -C "$tmp" "$member" || die "$ORT_TGZ has no $member"
	as_root install -m 0644 "$tmp/$member" "$ORT_TARGET"
	as_root ln -sfn "${ORT_TARGET##*/}" "$ORT_LINK"
	as_root ldconfig
}

if wanted onnxruntime; then
	log "[5/5] ONNX Runtime $ORT_VERSION (at ${SECONDS}s)"
	if ! forced onnxruntime && ort_present; then
		note "found $ORT_TARGET"
		PRESENT+=("onnxruntime $ORT_VERSION")
	else
		install_ort
		note "installed $ORT_TARGET and $ORT_LINK"
		INSTALLED+=("onnxruntime $ORT_VERSION")
	fi
fi

# Chromium, only with --browser: the page test drives the chat page in it and
# fails without it, as a database test fails without PostgreSQL.
if ((BROWSER)); then
	log "[browser] Chromium (at ${SECONDS}s)"
	if have_chromium; then
		note "found $(command -v chromium)"
		PRESENT+=(chromium)
	else
		apt_install chromium
		have_chromium || die "chromium was installed but is not on PATH"
		note "installed $(command -v chromium)"
		INSTALLED+=(chromium)
	fi
fi

join() {
	local IFS=,
	if (($#)); then printf '%s' "$*" | sed 's/,/, /g'; else printf 'nothing'; fi
}
log "Done in ${SECONDS}s. Installed: $(join "${INSTALLED[@]}"). Already present: $(join "${PRESENT[@]}")."
