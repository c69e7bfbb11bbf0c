#!/usr/bin/env bash
# What #[derive(Fenced)] costs to compile: `cargo check` of a generated crate with 200 derived
# types, next to the same crate with 200 `#[derive(serde::Serialize)]` types, in one run.
#
#   scripts/compile-cost.sh [types] [rounds]
#
# Each variant's dependencies are built first; then each round touches every variant's lib.rs
# and times `cargo check` of that crate alone, alternating variants so machine noise hits all
# of them alike. Prints the median of each and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
types=${1:-200}
rounds=${2:-7}
work=$root/target/compile-cost
mkdir -p "$work"

variants=(serialize fenced-content fenced-json)

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

declare -A times
for _ in $(seq 1 "$rounds"); do
    for v in "${variants[@]}"; do
        touch "$work/$v/src/lib.rs"
        start=$(date +%s%N)
        cargo check -q --manifest-path "$work/$v/Cargo.toml"
        end=$(date +%s%N)
        times[$v]+="$(( (end - start) / 1000000 )) "
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${times[serialize]}" | median)
printf '%-16s %10s %8s   (%s types, median of %s rounds, ms)\n' variant "check ms" ratio "$types" "$rounds"
for v in "${variants[@]}"; do
    m=$(echo "${times[$v]}" | median)
    printf '%-16s %10s %8s\n' "$v" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f", a / b}')"
done
