#!/bin/sh
# demo.sh: the main job end to end on a small default graph (scale 16) on
# 4 ranks: generate, partition 2x2, search 64 roots (validated), report.
# DEMO_SCALE and DEMO_DIR override the scale and the working directory.
set -e
cd "$(dirname "$0")/.."
PATH=$PWD/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SCALE=${DEMO_SCALE:-16}
DIR=${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/kbfs-demo.XXXXXX")}
mkdir -p "$DIR"
run() { echo "+ $*" >&2; "$@"; }
run kgen -s "$SCALE" -o "$DIR/g.kg"
run kstat "$DIR/g.kg"
run kpart -R 2 -C 2 --force -o "$DIR/g.2x2" "$DIR/g.kg"
run mpirun --oversubscribe -np 4 kbfs --threads 1 --json "$DIR/run.json" "$DIR/g.2x2"
run kstat --svg "$DIR/levels.svg" "$DIR/run.json" >/dev/null
echo "demo: files in $DIR (g.kg, g.2x2/, run.json, levels.svg)" >&2
