#!/bin/bash
# The first turns of a fresh `ragd serve`: the time from start until /readyz answers 200, then,
# DELAY seconds later, two /v1/ask turns (different questions, new conversations) and the stage
# timings each reports, and the server's memory after them (Go heap in use, from /metrics, no GC
# forced; resident). SciFact loaded beforehand:
#   ragd --data-dir DATA --database-url OWNER_URL eval beir ../shared/data/scifact --methods bm25
# Usage: scripts/first-turn.sh RAGD DATA LOGIN_URL OWNER_URL DELAY [PORT]
set -euo pipefail
BIN=$1 DATA=$2 LOGIN=$3 OWNER=$4 DELAY=$5 PORT=${6:-18291}
LOG=$(mktemp)
start=$(date +%s%N)
"$BIN" --data-dir "$DATA" --database-url "$LOGIN" --migrate-database-url "$OWNER" --schema eval_scifact \
  --index-dir "$DATA/eval/scifact/bm25" serve --listen "127.0.0.1:$PORT" >"$LOG" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$LOG"' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz"; do
  kill -0 $server 2>/dev/null || { cat "$LOG"; exit 1; }
  sleep 0.01
done
out="ready_ms=$((($(date +%s%N) - start) / 1000000))"
sleep "$DELAY"
for q in "Does vitamin D reduce fracture risk?" "What causes insulin resistance in muscle?"; do
  t=$(curl -sf -H 'content-type: application/json' "http://127.0.0.1:$PORT/v1/ask" -d "{\"message\":\"$q\"}" |
    python3 -c 'import json,sys; t={x["stage"]:x["ms"] for x in json.load(sys.stdin)["timings"]}; print(" ".join("%s=%.1f" % (k,t[k]) for k in ("total","focus","classify","bundle")))')
  out="$out | $t"
done
heap=$(curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^go_memstats_heap_inuse_bytes /{printf "%d", $2/1024}')
echo "$out | heap_inuse_kb=$heap | rss_kb=$(ps -o rss= -p $server | tr -d ' ') | load $(cut -d' ' -f1 /proc/loadavg) | $(grep -o 'took=[^ ]*' "$LOG" | tr '\n' ' ')"
