#!/usr/bin/env bash
# `iolab run` end to end with extreme values of each option used in tests/jobs/*.fio (every
# implemented option has a line there): a tiny job per (option, value), each under a time
# limit. What parse+resolve accept goes on to planning and running, where the verify,
# steadystate, placement and log code reads the value. Reports runs that panicked, died of
# a signal, exited with a code other than 0 or 1, or outlived the limit.
#
#   bench/fuzz/options.sh [iolab binary]     # default target/debug/iolab
#   FILES='verify control' bench/fuzz/options.sh   # only tests/jobs/{verify,control}.fio
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/target/debug/iolab}
limit=${LIMIT_S:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=${FILES:-$(cd "$root/tests/jobs" && ls *.fio | sed 's/\.fio$//')}
values=(0 1 -1 4096 18446744073709551615 9223372036854775808 1e30 0x 4g 1t 100% '' x ',' ':'
  '1-0' '99999999999' '0-4294967295' 'bad:1:2')
# Values near this machine's limits (issue 33): its memory in bytes and in 4 KiB pages, one
# past its descriptor, thread and mapping limits, fio's job limit: counts and sizes that must
# be refused (or run within the limits) before anything is allocated.
mem=$(awk '/^MemTotal:/ { printf "%d", $2 * 1024 }' /proc/meminfo)
values+=("$mem" "$((mem / 4096))" "$(( $(ulimit -n) + 1 ))" "$(( $(ulimit -u) + 1 ))"
  "$(( $(cat /proc/sys/kernel/threads-max) + 1 ))" "$(( $(cat /proc/sys/vm/max_map_count) + 1 ))"
  4097 '(1s)')
# A regression that allocates what it should refuse fails at this address-space limit (KiB)
# rather than taking the machine.
vlimit=${VLIMIT_KIB:-3000000}
opts=$(for f in $files; do
  grep -hoE '^[a-z_0-9]+' "$root/tests/jobs/$f.fio"
done | sort -u | grep -vE '^(filename|directory|opendir|exec_prerun|exec_postrun|trigger|ioscheduler|cgroup|read_iolog|write_iolog|uid|gid|nice|prio|prioclass|unlink|create_only|write_.*_log|lockfile|pre_read)$')
runs=0 bad=0
for o in $opts; do
  for v in "${values[@]}"; do
    runs=$((runs + 1))
    out=$(cd "$work" && ulimit -v "$vlimit" && timeout -s KILL "$limit" "$bin" run --name=f \
      --filename=f.data --size=64k --bs=4k --runtime=1 --output-format=terse "--$o=$v" 2>&1 </dev/null)
    rc=$?
    if [ "$rc" -gt 1 ] || grep -q "panicked" <<<"$out"; then
      bad=$((bad + 1))
      printf 'BAD rc=%s --%s=%s: %s\n' "$rc" "$o" "$v" "$(grep -m1 -E 'panicked|error|rror' <<<"$out" | cut -c1-200)"
    fi
    rm -rf "${work:?}"/*
  done
done
echo "options.sh: $runs runs, $bad bad"
[ "$bad" -eq 0 ]
