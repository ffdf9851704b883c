#!/bin/sh
# run-all.sh: the CPU benchmarks of `make bench` (GPU: share/bench/gpu.sh).
# Prints each script's table; figures and their history: share/bench/NOTES.md.
set -e
here=$(cd "$(dirname "$0")" && pwd)
for b in kgen.sh kpart.sh cpu.sh; do
	echo "== $b"
	sh "$here/$b"
done
