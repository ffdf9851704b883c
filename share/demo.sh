#!/bin/sh
# demo.sh: the main job end to end on a small default graph (scale 16) on
# 4 ranks: generate, partition 2x2, search 64 roots (validated), report;
# then one search from one vertex, its depths on standard output.
# Each command is printed as you would type it in this directory, its
# redirections included: bin/ on PATH and the mpirun options this machine
# and user need (--allow-run-as-root for root, --oversubscribe with fewer
# than 4 cores).  From a source tree (make demo) the files go to build/demo,
# replaced on every run and removed by `make clean`; installed
# (share/kbfs/demo.sh) it runs the programs on PATH and writes ./kbfs-demo
# in the current directory, never into the install tree.  DEMO_DIR and
# DEMO_SCALE override the directory and the scale.
set -e
SCALE=${DEMO_SCALE:-16}
say() { echo "+ $*" >&2; }
run() { say "$@"; "$@"; }
# run_to FILE CMD...: CMD with its standard output to FILE, printed so
run_to() {
	f=$1
	shift
	say "$@" ">$f"
	"$@" >"$f"
}
src=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$src/Makefile" ] && [ -d "$src/cmd" ]; then
	cd "$src"
	DIR=${DEMO_DIR:-build/demo}
	[ -n "${DEMO_DIR:-}" ] || rm -rf "$DIR"
	say "export PATH=\"\$PWD/bin:\$PATH\""
	PATH=$PWD/bin:$PATH
else
	command -v kgen >/dev/null 2>&1 || { echo "demo: kgen is not on PATH (make install puts it in PREFIX/bin)" >&2; exit 3; }
	DIR=${DEMO_DIR:-kbfs-demo}
	# only a directory an earlier demo made (its mark inside) is replaced
	if [ -z "${DEMO_DIR:-}" ] && [ -e "$DIR" ]; then
		[ -e "$DIR/.kbfs-demo" ] || { echo "demo: '$PWD/$DIR' exists and is not an earlier demo's: move it or set DEMO_DIR" >&2; exit 3; }
		rm -rf "$DIR"
	fi
fi
mkdir -p "$DIR"
: >"$DIR/.kbfs-demo"
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
run_to /dev/null kstat --svg "$DIR/levels.svg" "$DIR/run.json"
# one search from the run's first root; its depths ("v depth") to stdout
root=$(sed -n 's/^      "root": \([0-9]*\),$/\1/p' "$DIR/run.json" | head -1)
run_to "$DIR/depths.txt" "$@" -np 4 kbfs --threads 1 -r "$root" --depth-out - "$DIR/g.2x2"
say "head -3 $DIR/depths.txt"
head -3 "$DIR/depths.txt"
echo "demo: files in $DIR (g.kg, g.2x2/, run.json, levels.svg, depths.txt)" >&2
