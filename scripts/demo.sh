#!/usr/bin/env bash
# ragd's main job in one command on a Debian machine: installs what is missing (Go, PostgreSQL,
# pgvector, ONNX Runtime: scripts/setup.sh), builds ragd, ingests the sample corpus in
# testdata/corpus, starts the server and asks it a question, then a follow-up in the same
# conversation. No database set-up: ragd runs a private PostgreSQL inside its data directory.
#
# RAGD_EMBED_MODEL and RAGD_RERANK_MODEL (model directories) add vector search and reranking;
# without them the demo runs BM25 only. RAGD_DEMO_DATA keeps the data directory; RAGD_DEMO_PORT
# changes the port (default 18080).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# setup.sh links go into /usr/local/bin; this covers a PATH without it.
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH

echo "==> building ragd"
mkdir -p bin
go build -o bin/ragd ./cmd/ragd

data=${RAGD_DEMO_DATA:-$(mktemp -d /tmp/ragd-demo.XXXXXX)}
mkdir -p "$data"
chmod 755 "$data" # the private PostgreSQL runs as the postgres account when this runs as root
export RAGD_DATA_DIR=$data RAGD_LISTEN=127.0.0.1:${RAGD_DEMO_PORT:-18080}
url=http://$RAGD_LISTEN

echo "==> ingesting testdata/corpus into $data"
bin/ragd ingest testdata/corpus

echo "==> starting the server on $url"
bin/ragd serve &
server=$!
cleanup() {
	kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	[ -n "${RAGD_DEMO_DATA:-}" ] || rm -rf "$data"
}
trap cleanup EXIT

echo "==> asking"
first=$(bin/ragd ask --url "$url" --wait 60s "What should I do if I smell gas after an earthquake?")
echo "$first"
conversation=$(echo "$first" | sed -n 's/^conversation \([0-9a-f-]*\),.*/\1/p')

echo "==> asking a follow-up in the same conversation"
bin/ragd ask --url "$url" --conversation "$conversation" "Is it the same after a flood?"
