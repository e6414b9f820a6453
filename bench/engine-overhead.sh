#!/usr/bin/env bash
# Engine-layer micro benchmark: our overhead per I/O on the null engine, and system calls per
# I/O for psync, libaio and io_uring, each cross-checked against strace's own count.
# Not run by cargo test. Usage: bench/engine-overhead.sh [DIR]   (DIR: where the test file goes)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$PWD/target}
command -v strace >/dev/null || { apt-get update -qq && apt-get install -y -qq strace >/dev/null; }
cargo build --release -q -p iolab-engine --example overhead
bin=target/release/examples/overhead
mkdir -p bench/results
out=bench/results/engine-overhead-$(date -u +%Y%m%dT%H%M%SZ).txt
{
  echo "# $(date -u) kernel $(uname -r); $(nproc) CPUs"
  echo "# filesystem of $dir: $(df -T "$dir" | awk 'NR==2{print $2" on "$1}')"
  "$bin" "$dir"
  echo "# IOPS above are single unpaired runs, for orientation only (no peer, no pairing);"
  echo "# the figures this benchmark stands for are ns per I/O and system calls per I/O."
  echo
  echo "strace check: system calls the engine counted vs those strace saw (I/O calls only)"
  # The program's own start-up (the dynamic loader reads ELF headers with pread64) is measured
  # once with no mode selected and subtracted.
  count_strace() {
    strace -f -c -e trace=pread64,io_submit,io_getevents,io_uring_enter -o /tmp/strace.$$ "$bin" "$dir" --only "$1" >/dev/null 2>&1 || true
    awk '$NF ~ /^(pread64|io_submit|io_getevents|io_uring_enter)$/ {s+=$4} END{print s+0}' /tmp/strace.$$
  }
  base=$(count_strace none)
  printf '%-28s %10s %10s\n' mode counted strace
  for label in "psync" "libaio d32" "libaio d32 batched" "io_uring d1" "io_uring d32" "io_uring d32 batched" "io_uring d32 sqpoll"; do
    counted=$("$bin" "$dir" --only "$label" | awk -v l="$label" '$1=="#counted"{print $NF}')
    seen=$(( $(count_strace "$label") - base ))
    printf '%-28s %10s %10s\n' "$label" "${counted:-n/a}" "$seen"
  done
  rm -f /tmp/strace.$$
} | tee "$out"
echo "saved $out"
