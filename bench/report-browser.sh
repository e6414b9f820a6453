#!/usr/bin/env bash
# Renders the sample comparison page (synthetic data) in headless Chromium, takes a screenshot
# and checks that the rendered DOM has the five plots and the table. Not run by `cargo test`:
# it needs Chromium (installed with apt-get when missing and running as root).
#
#   bench/report-browser.sh            # writes target/report-sample.{html,png,dom.html}
#
# The screenshot stays under target/ (ignored by git): look at it, do not commit it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out="$root/target"
mkdir -p "$out"
html="$out/report-sample.html"
png="$out/report-sample.png"
dom="$out/report-sample.dom.html"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$chromium" ]]; then
    if [[ $(id -u) -ne 0 ]]; then
        echo "chromium is not installed; as root: apt-get install chromium" >&2
        exit 2
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    chromium=$(command -v chromium)
fi

cargo run -q -p iolab-report --example sample_report -- "$html"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Everything that could reach the network is off: the page must render from the file alone.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --user-data-dir="$profile" --window-size=1200,3000 --hide-scrollbars)

rm -f "$png"
"$chromium" "${flags[@]}" --screenshot="$png" "file://$html" >/dev/null 2>&1 || true
"$chromium" "${flags[@]}" --dump-dom "file://$html" >"$dom" 2>/dev/null

fail=0
check() { # what, extended regex
    if grep -Eq "$2" "$dom"; then
        echo "ok      $1"
    else
        echo "MISSING $1" >&2
        fail=1
    fi
}
for id in plot-percentiles plot-iops-time plot-lat-time plot-histogram plot-bars-iops plot-bars-cpu; do
    check "figure #$id with an svg" "<figure id=\"$id\"><svg"
done
check "table #compare-table" '<table id="compare-table">'
rows=$(grep -o '<tr><td class="label">' "$dom" | wc -l)
if [[ $rows -ge 4 ]]; then echo "ok      $rows table rows"; else echo "MISSING table rows ($rows)" >&2; fail=1; fi
check "findings" '<section id="findings">'
check "machine" '<section id="machine">'
check "workload" '<section id="workload">'
if grep -Eqi '<script|https?:' "$dom"; then
    echo "FOUND a script or a URL in the page" >&2
    fail=1
fi

# A blank 1200x3000 page compresses to a few KB; the plots and table make it far larger.
if [[ -s "$png" && $(stat -c %s "$png") -gt 50000 ]]; then
    echo "ok      screenshot $png ($(stat -c %s "$png") bytes)"
else
    echo "MISSING screenshot (or blank)" >&2
    fail=1
fi
exit $fail
