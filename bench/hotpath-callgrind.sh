#!/bin/bash
# User-space instructions per I/O of iolab and fio, from callgrind: deterministic where timing
# is not (a busy machine changes the IOPS, not the instructions). Each job runs twice, with N1
# and N2 I/Os; (Ir(N2) - Ir(N1)) / (N2 - N1) is the cost of one more I/O, start-up and teardown
# cancelled out. Kernel work is not counted (see hotpath.py --syscalls for system calls per I/O).
#
# Jobs: null d1, null d128, psync d1 and io_uring d32: 4 KiB random reads, the last two of a
# 256 MiB file in /dev/shm (made here and removed at the end, also on failure), buffered:
# the page cache answers in the system call itself, so a run under valgrind is not held up
# by a loop device's worker on a busy machine. What runs in user space per I/O is the same
# as with O_DIRECT on a device (hotpath.py times that).
#
# usage: bench/hotpath-callgrind.sh [IOLAB_BINARY ...]   (default target/release/iolab; fio from PATH)
# Needs valgrind and fio. Not run by cargo test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BINS=("$@")
[ ${#BINS[@]} -eq 0 ] && BINS=("$ROOT/target/release/iolab")
# I/Os of the two runs: the null engine's, and the file's.
N1=${N1:-50000}
N2=${N2:-150000}
D1=${D1:-50000}
D2=${D2:-150000}
TMP=$(mktemp -d /tmp/iolab-cg.XXXXXX)
FILE=""
cleanup() {
    [ -n "$FILE" ] && rm -f "$FILE"
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

FILE=$(mktemp /dev/shm/iolab-cg-XXXXXX.img)
dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none

BASE=(--rw=randread --bs=4k --norandommap --randrepeat=0)
declare -A JOBS=(
    ["null d1"]="--ioengine=null --iodepth=1 --size=1g"
    ["null d128"]="--ioengine=null --iodepth=128 --size=1g"
    ["psync d1"]="--ioengine=psync --iodepth=1 --filename=$FILE --size=256m --loops=4"
    ["io_uring d32"]="--ioengine=io_uring --iodepth=32 --filename=$FILE --size=256m --loops=4"
    ["io_uring d1"]="--ioengine=io_uring --iodepth=1 --filename=$FILE --size=256m --loops=4"
    ["libaio d32"]="--ioengine=libaio --iodepth=32 --filename=$FILE --size=256m --loops=4"
)
ORDER=("null d1" "null d128" "psync d1" "io_uring d32")
# ONLY="psync d1,io_uring d1,libaio d32" runs others or some of them.
if [ -n "${ONLY:-}" ]; then IFS=, read -r -a ORDER <<<"$ONLY"; fi

# Total instructions (all threads) of one run of `$@ --number_ios=$n`.
instr() {
    local n=$1
    shift
    local out="$TMP/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$out.%p" "$@" --number_ios="$n" \
        >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; return 1; }
    # One file per process (fio's job runs in a thread with --thread); sum the totals.
    cat "$out".* | awk '/^summary:/ {s += $2} END {print s}'
    rm -f "$out".*
}

per_io() {
    local n1=$1 n2=$2 a b
    shift 2
    a=$(instr "$n1" "$@") || exit 1
    b=$(instr "$n2" "$@") || exit 1
    echo $(((b - a) / (n2 - n1)))
}

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'); kernel $(uname -r); $(nproc) CPUs; $(fio --version);"\
     "valgrind $(valgrind --version | sed 's/valgrind-//'); N1=$N1 N2=$N2 D1=$D1 D2=$D2"
printf '%-14s %-28s %10s\n' job tool "instr/IO"
for job in "${ORDER[@]}"; do
    read -r -a opts <<<"${JOBS[$job]}"
    n=("$N1" "$N2")
    [[ $job == null* ]] || n=("$D1" "$D2")
    r=$(per_io "${n[@]}" fio --thread --name=cg "${BASE[@]}" "${opts[@]}" --output=/dev/null)
    printf '%-14s %-28s %10s\n' "$job" "fio" "$r"
    for bin in "${BINS[@]}"; do
        r=$(per_io "${n[@]}" "$bin" run --name=cg "${BASE[@]}" "${opts[@]}" --output=/dev/null)
        printf '%-14s %-28s %10s\n' "$job" "$(basename "$bin")" "$r"
    done
done
