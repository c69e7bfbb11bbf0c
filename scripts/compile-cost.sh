#!/usr/bin/env bash
# What #[derive(Fenced)] adds to compile time, per type, next to what #[derive(serde::Serialize)]
# adds: `cargo check` of generated crates of 200 types each, in one run.
#
#   scripts/compile-cost.sh [types] [rounds]
#
# Variants, each the same 200 structs (a status, a body and a list of tags):
#   none            no derive at all: the baseline every other variant is measured against
#   serialize       #[derive(serde::Serialize)]
#   fenced-content  #[derive(Fenced)] with a #[fence(content)] field (renders that field's text)
#   fenced-json     #[derive(serde::Serialize, Fenced)] (renders the value as JSON)
#
# Each variant's dependencies are built first; then each round touches every variant's lib.rs
# and times `cargo check` of that crate alone, the variants in turn, so machine noise hits all of
# them alike. The time is CPU time (`perf stat`'s task-clock, of cargo and the rustc it runs),
# which other processes on a shared machine disturb far less than wall time. Prints each variant's
# median, what it adds per type over `none`, and the two ratios the performance issue sets a
# floor on: what Fenced adds over what Serialize adds, at most 0.5, for a content field (over no
# derive) and for JSON rendering (over Serialize alone). Exits 1 when either is above it.
set -euo pipefail
command -v perf >/dev/null || { echo "compile-cost.sh needs perf (Debian: linux-perf) for CPU time" >&2; exit 2; }
cd "$(dirname "$0")/.."
root=$PWD
types=${1:-200}
rounds=${2:-9}
work=$root/target/compile-cost
mkdir -p "$work"

variants=(none serialize fenced-content fenced-json)

generate() {
    local name=$1 dir=$work/$1
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "compile-cost-$name"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
fence-runtime = { path = "$root/fence-runtime", features = ["derive"] }
serde = { version = "1", features = ["derive"] }

[workspace]
TOML
    {
        echo "#![allow(dead_code)]"
        for i in $(seq 1 "$types"); do
            case $name in
            none)
                echo "pub struct T$i { pub status: u16, pub body: String, pub tags: Vec<String> }" ;;
            serialize)
                echo "#[derive(serde::Serialize)] pub struct T$i { pub status: u16, pub body: String, pub tags: Vec<String> }" ;;
            fenced-content)
                echo "#[derive(fence_runtime::Fenced)] pub struct T$i { pub status: u16, #[fence(content)] pub body: String, pub tags: Vec<String> }" ;;
            fenced-json)
                echo "#[derive(serde::Serialize, fence_runtime::Fenced)] pub struct T$i { pub status: u16, pub body: String, pub tags: Vec<String> }" ;;
            esac
        done
    } >"$dir/src/lib.rs"
}

export CARGO_TARGET_DIR=$work/target
for v in "${variants[@]}"; do
    generate "$v"
    cargo check -q --manifest-path "$work/$v/Cargo.toml"
done

# CPU milliseconds of one `cargo check` (perf's task-clock counts child processes too).
cpu_ms() {
    perf stat -x, -e task-clock -o "$work/time.txt" cargo check -q --manifest-path "$1"
    awk -F, '$3 == "task-clock" {printf "%.1f", $1}' "$work/time.txt"
}

declare -A times
for _ in $(seq 1 "$rounds"); do
    for v in "${variants[@]}"; do
        touch "$work/$v/src/lib.rs"
        times[$v]+="$(cpu_ms "$work/$v/Cargo.toml") "
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
for v in "${variants[@]}"; do
    med[$v]=$(echo "${times[$v]}" | median)
done

printf '%-16s %12s %16s   (%s types, median of %s rounds)\n' variant "check CPU ms" "added ms/type" "$types" "$rounds"
for v in "${variants[@]}"; do
    printf '%-16s %12s %16s\n' "$v" "${med[$v]}" \
        "$(awk -v a="${med[$v]}" -v b="${med[none]}" -v n="$types" 'BEGIN {printf "%.3f", (a - b) / n}')"
done
for v in "${variants[@]}"; do
    printf '  %-14s all rounds: %s\n' "$v" "${times[$v]}"
done

serialize_adds=$(awk -v a="${med[serialize]}" -v b="${med[none]}" 'BEGIN {print a - b}')
content_adds=$(awk -v a="${med[fenced-content]}" -v b="${med[none]}" 'BEGIN {print a - b}')
json_adds=$(awk -v a="${med[fenced-json]}" -v b="${med[serialize]}" 'BEGIN {print a - b}')
failed=0
report() {
    local what=$1 adds=$2
    local ratio
    ratio=$(awk -v a="$adds" -v b="$serialize_adds" 'BEGIN {printf "%.2f", a / b}')
    local verdict=ok
    if awk -v r="$ratio" 'BEGIN {exit !(r > 0.5)}'; then
        verdict=ABOVE
        failed=1
    fi
    printf '%-44s %6.2f x what Serialize adds (floor: at most 0.5) %s\n' "$what" "$ratio" "$verdict"
}
echo
report "Fenced with a content field, over no derive:" "$content_adds"
report "Fenced on top of Serialize, over Serialize:" "$json_adds"
exit $failed
