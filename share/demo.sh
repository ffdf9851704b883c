#!/bin/sh
# demo.sh: the main job end to end on a small default graph (scale 16) on
# 4 ranks: generate, partition 2x2, search 64 roots (validated), report;
# then one search from one vertex, its depths on standard output.
# Each command is printed as you would type it in this directory: bin/ on
# PATH and the mpirun options this machine and user need (--allow-run-as-root
# for root, --oversubscribe with fewer than 4 cores).  The files go to
# build/demo, replaced on every run and removed by `make clean`; DEMO_DIR
# and DEMO_SCALE override the directory and the scale.
set -e
cd "$(dirname "$0")/.."
SCALE=${DEMO_SCALE:-16}
DIR=${DEMO_DIR:-build/demo}
[ -n "${DEMO_DIR:-}" ] || rm -rf "$DIR"
mkdir -p "$DIR"
say() { echo "+ $*" >&2; }
run() { say "$@"; "$@"; }
say "export PATH=\"\$PWD/bin:\$PATH\""
PATH=$PWD/bin:$PATH
# Open MPI gives one slot per core (not per hardware thread)
cores=$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)
[ "${cores:-0}" -gt 0 ] || cores=$(nproc)
set -- mpirun
[ "$(id -u)" != 0 ] || set -- "$@" --allow-run-as-root
[ "$cores" -ge 4 ] || set -- "$@" --oversubscribe
run kgen -s "$SCALE" -o "$DIR/g.kg"
run kstat "$DIR/g.kg"
run kpart -R 2 -C 2 --force -o "$DIR/g.2x2" "$DIR/g.kg"
run "$@" -np 4 kbfs --threads 1 --json "$DIR/run.json" "$DIR/g.2x2"
run kstat --svg "$DIR/levels.svg" "$DIR/run.json" >/dev/null
# one search from the run's first root; its depths ("v depth") to stdout
root=$(sed -n 's/^      "root": \([0-9]*\),$/\1/p' "$DIR/run.json" | head -1)
run "$@" -np 4 kbfs --threads 1 -r "$root" --depth-out - "$DIR/g.2x2" >"$DIR/depths.txt"
say "head -3 $DIR/depths.txt"
head -3 "$DIR/depths.txt"
echo "demo: files in $DIR (g.kg, g.2x2/, run.json, levels.svg, depths.txt)" >&2
