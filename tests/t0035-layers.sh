#!/bin/bash
# libcommon's layers (libcommon/README.md): no #include climbs a layer or
# reaches into cmd/ or gpu/, no object uses a higher layer's symbols, no
# files call each other in a circle (tests/tools/layers.sh); and the check
# fails when a copy of the tree breaks each rule.
. "$(dirname "$0")/lib.sh"
L=$TOP/tests/tools/layers.sh

run_ok "every #include of libcommon stays in its layer or below" sh "$L" -C "$TOP"
run_ok "... and every object of build/ (no higher layer's symbol, no circle)" sh "$L" -C "$TOP" --objects "$TOP/build"

# a copy with one include planted at a time: each must fail, naming it
plant() { # FILE HEADER: libcommon, cmd and gpu copied to $T/src, FILE including HEADER
	rm -rf "$T/src" && mkdir -p "$T/src" && cp -R "$TOP/libcommon" "$TOP/cmd" "$TOP/gpu" "$T/src/" &&
		printf '#include "%s"\n' "$2" >>"$T/src/libcommon/$1"
}
for p in "base/klog.c kbfs.h graph/, a layer above base/" \
	"formats/kedge.h ksvg.h report/, a layer above formats/" \
	"graph/kbfs.c kgpu.h a header of cmd/ or gpu/" \
	"report/ksvg.c kbfs_run.h a header of cmd/ or gpu/" \
	"base/kio_in.c nosuch.h not a header of libcommon"; do
	set -- $p
	f=$1 h=$2
	shift 2
	plant "$f" "$h"
	sh "$L" -C "$T/src" >"$T/out" 2>&1
	is "$? $(grep -c "^libcommon/$f:[0-9]*: includes \"$h\".*$*" "$T/out")" "1 1" \
		"a planted #include \"$h\" in $f fails the check and is named"
done

# objects: a made-up libcommon whose base/ calls graph/, and two files of
# base/ that call each other
mkdir -p "$T/fake/libcommon/base" "$T/fake/libcommon/graph" "$T/fake/build/libcommon/base" \
	"$T/fake/build/libcommon/graph"
cp "$TOP/libcommon/README.md" "$T/fake/libcommon/"
echo 'int kb(void); int ka(void) { return kb(); }' >"$T/fake/libcommon/base/ka.c"
echo 'int ka(void); int kb(void) { return ka(); }' >"$T/fake/libcommon/base/kb.c"
echo 'int kg(void); int kc(void) { return kg(); }' >"$T/fake/libcommon/base/kc.c"
echo 'int kg(void) { return 1; }' >"$T/fake/libcommon/graph/kg.c"
for f in base/ka base/kb base/kc graph/kg; do
	cc -c -o "$T/fake/build/libcommon/$f.o" "$T/fake/libcommon/$f.c" || echo "# cc failed"
done
sh "$L" -C "$T/fake" --objects "$T/fake/build" >"$T/out" 2>&1
rc=$?
is "$rc $(grep -c '^base/kc.o uses kg of graph/kg.o, a layer above it$' "$T/out")" "1 1" \
	"an object using a higher layer's symbol fails the check and is named"
is "$(grep -c '^base/k[ab].o is in a circle of calls' "$T/out")" "2" "... and so do two objects calling each other"
is "$(grep -c '^base/kc.o is in a circle' "$T/out")" "0" "... (one that calls no circle is not blamed for it)"
done_testing
