#!/usr/bin/env bash
# A long fuzz campaign over the job-file parser, the expression evaluator, the command line,
# and (libFuzzer only; their proptests run in those crates' tests) serve's HTTP request
# handling, the replay logs (iolog v2/v3, blktrace, merge), verify state files and
# compressed logs. bench/fuzz/options.sh runs `iolab run` end to end with extreme values.
#
#   bench/fuzz/run.sh                 # 100,000 proptest inputs per target (release build)
#   CASES=1000000 bench/fuzz/run.sh   # more
#   FUZZ_SECONDS=300 bench/fuzz/run.sh  # also each cargo-fuzz target for 300 s, when
#                                       # cargo-fuzz and a nightly toolchain are installed
#
# libFuzzer inputs are cut to MAX_LEN bytes (default 8192, which still nests far past the
# expression limit); the full-size crash inputs are replayed by `cargo test` (fuzz.rs).
#
# Prints, per target, the inputs tried, crashes and hangs (an input slower than HANG_MS,
# default 5000 ms). Exit status 1 if any target found a crash or a hang.
set -uo pipefail
cd "$(dirname "$0")/../.."

cases=${CASES:-100000}
hang_ms=${HANG_MS:-5000}
log=$(mktemp -d)
status=0

echo "== proptest campaign: $cases inputs per target (crates/job/tests/fuzz.rs)"
IOLAB_FUZZ_CASES=$cases IOLAB_FUZZ_HANG_MS=$hang_ms \
  timeout $((cases / 10 + 600)) cargo test --release -q -p iolab-job --test fuzz -- \
  --nocapture --test-threads=1 >"$log/proptest.txt" 2>&1
rc=$?
for t in job_file expr cmdline; do
  line=$(grep -o "fuzz $t: .*" "$log/proptest.txt" | head -1)
  tried=$(sed -n 's/.*: \([0-9]*\) inputs tried.*/\1/p' <<<"$line")
  # proptest stops a target at its first failure (and shrinks it): 0 or 1 of each.
  crashes=0 hangs=0
  if [[ "$line" != *"no failure"* ]]; then
    if grep -q "fuzz $t: .*hang: one input took" "$log/proptest.txt"; then hangs=1; else crashes=1; fi
  fi
  printf '%-10s proptest   inputs %-9s crashes %-8s hangs %s\n' "$t" "${tried:-?}" "$crashes" "$hangs"
done
if [ "$rc" -ne 0 ]; then
  status=1
  if [ "$rc" -eq 124 ]; then echo "proptest campaign timed out: a hang"; fi
  echo "proptest log: $log/proptest.txt"
  grep -E "minimal failing input|panicked|hang:" "$log/proptest.txt" | head -20
fi

if [ -n "${FUZZ_SECONDS:-}" ]; then
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz or nightly missing: libFuzzer campaign skipped (cargo install cargo-fuzz)"
  else
    for t in job_file expr cmdline http_request iolog verify_state inflate_log; do
      work="$log/corpus-$t"
      mkdir -p "$work" "$log/artifacts-$t"
      # Seeds: the job targets keep theirs in fuzz/corpus, the others in fuzz/seeds; the job
      # file and command line also get every implemented option, from tests/jobs/*.fio.
      cp fuzz/corpus/$t/* fuzz/seeds/$t/* "$work"/ 2>/dev/null
      case $t in
        job_file) cp tests/jobs/*.fio "$work"/ ;;
        cmdline) grep -hE '^[a-z_0-9]+' tests/jobs/*.fio | sort -u | awk -v d="$work" \
          '{ f = sprintf("%s/opt-%d", d, NR); printf "--name=j\n--size=1m\n--%s\n", $0 > f; close(f) }' ;;
      esac
      (cd fuzz && cargo +nightly fuzz run -O "$t" "$work" -- \
        -max_total_time="$FUZZ_SECONDS" -timeout=$(((hang_ms + 999) / 1000)) -rss_limit_mb=4096 \
        -max_len="${MAX_LEN:-8192}" -artifact_prefix="$log/artifacts-$t/") >"$log/libfuzzer-$t.txt" 2>&1
      runs=$(grep -o 'Done [0-9]* runs' "$log/libfuzzer-$t.txt" | grep -o '[0-9]*')
      crashes=$(find "$log/artifacts-$t" -name 'crash-*' -o -name 'oom-*' | wc -l)
      hangs=$(find "$log/artifacts-$t" -name 'timeout-*' -o -name 'slow-unit-*' | wc -l)
      printf '%-10s libFuzzer  inputs %-9s crashes %-8s hangs %s\n' "$t" "${runs:-?}" "$crashes" "$hangs"
      if [ -z "$runs" ] || [ "$crashes" -ne 0 ] || [ "$hangs" -ne 0 ]; then
        status=1
        echo "libFuzzer log: $log/libfuzzer-$t.txt"
      fi
    done
  fi
fi
exit $status
