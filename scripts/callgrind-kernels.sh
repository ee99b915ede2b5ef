#!/usr/bin/env bash
# Instruction counts of the scan kernels per path (a repeatable measure on a
# noisy machine), 10k rows x 384, serial: one single-query top-k scan, one
# 64-query batch top-k scan, one read pass. Each count is the test process's
# total minus a run that only builds the data. valgrind cannot execute
# AVX-512, so only the AVX2 and portable paths are counted.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cargo test --release --no-default-features --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable") and "rlib" in j["target"]["kind"]][0])')
count() {
  local out; out=$(mktemp)
  MEMSIEVE_ISA=$1 MEMSIEVE_KERNEL=$2 MEMSIEVE_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$bin" --ignored --exact kernels::tests::callgrind_workload --test-threads=1 -q >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1; exit}'
  rm -f "$out"
}
for isa in avx2 portable; do
  base=$(count "$isa" none)
  for k in scan batch read; do
    printf '%-9s %-6s %12d instructions\n' "$isa" "$k" $(( $(count "$isa" "$k") - base ))
  done
done
