#!/bin/sh
# demo.sh: the main job end to end on a small default graph.
set -e
cd "$(dirname "$0")/.."
PATH=$PWD/bin:$PATH
echo "+ kgen -s 16 | kstat -" >&2
kgen -s 16 | kstat -
