#!/bin/bash
# kstat on edge files: the report, JSON, SVG, and every corrupt fixture refused.
. "$(dirname "$0")/lib.sh"
need_python
F=$FIX/kedge

run_ok "kgen -s 16 | kstat -" sh -c "kgen -s 16 | kstat -"
ok "reports vertices" grep -q '^vertices: *65536$' "$T/out"
ok "reports edges" grep -q '^edges: *1048576$' "$T/out"
ok "reports a log2 degree histogram" grep -q '^  \[1, 2) ' "$T/out"

# exact counts on the reference graph of scale 10, computed independently with awk
ref_edges 3.0.1 10 txt
EDG=$T/kron-v3.0.1-s10-ef16.txt
kgen -s 10 -o "$T/s10.kg"
run_ok "kstat on scale 10" kstat "$T/s10.kg"
awk '$1==$2{n++} END{print n+0}' "$EDG" >"$T/loops"
awk '{a=$1<$2?$1:$2; b=$1<$2?$2:$1; k=a" "b; if (k in seen) d++; seen[k]=1} END{print d+0}' \
	"$EDG" >"$T/dups"
awk '{d[$1]++; d[$2]++} END{m=0; for (v in d) if (d[v]>m) m=d[v]; n=0; for (v=0; v<1024; v++) if (!(v in d)) n++; print m, n}' \
	"$EDG" >"$T/degs"
is "$(sed -n 's/^self-loops: *//p' "$T/out")" "$(cat "$T/loops")" "self-loops match an independent count"
is "$(sed -n 's/^duplicate edges: *//p' "$T/out")" "$(cat "$T/dups")" "duplicates match an independent count"
is "$(sed -n 's/^maximum degree: *\([0-9]*\).*/\1/p' "$T/out") $(sed -n 's/^isolated vertices: *//p' "$T/out")" \
	"$(cat "$T/degs")" "maximum degree and isolated vertices match"
run_ok "kstat --json" kstat --json "$T/s10.kg"
ok "JSON parses and has the counts" python3 -c "
import json,sys; d=json.load(open('$T/out')); assert d['vertices']==1024 and d['edges']==16384, d
assert d['provenance']['kind']=='kronecker' and d['provenance']['scale']=='10'"
run_ok "kstat --svg" kstat --svg "$T/deg.svg" "$T/s10.kg"
ok "SVG is well-formed XML" python3 -c "import xml.dom.minidom; xml.dom.minidom.parse('$T/deg.svg')"
ok "SVG has log axes labels" grep -q 'degree' "$T/deg.svg"

run_ok "a compressed edge file is read" kstat "$F/good-compressed.kedge"
ok "same counts as the raw file" sh -c "kstat '$F/good.kedge' | grep -v -e ^file: -e ^format: > '$T/a'; kstat '$F/good-compressed.kedge' | grep -v -e ^file: -e ^format: | cmp -s - '$T/a'"

must_fail 1 "truncated.kedge: truncated" kstat "$F/truncated.kedge"
stderr_has "truncated" "names truncation"
must_fail 1 "truncated-header.kedge: truncated" kstat "$F/truncated-header.kedge"
must_fail 1 "truncated-compressed.kedge: truncated" kstat "$F/truncated-compressed.kedge"
must_fail 1 "bitflip-payload.kedge: checksum" kstat "$F/bitflip-payload.kedge"
stderr_has "checksum mismatch" "names the checksum"
must_fail 1 "bitflip-header.kedge: header checksum" kstat "$F/bitflip-header.kedge"
must_fail 1 "wrong-magic.kedge: wrong magic" kstat "$F/wrong-magic.kedge"
stderr_has "binary file, neither a kbfs edge file nor a text graph" "says it is neither an edge file nor text"
must_fail 1 "empty.kedge: empty" kstat "$F/empty.kedge"
must_fail 1 "newer-major.kedge: newer version" kstat "$F/newer-major.kedge"
stderr_has "newer than this kbfs supports" "names the version"
must_fail 1 "trailing-garbage.kedge: data after trailer" kstat "$F/trailing-garbage.kedge"
must_fail 1 "a truncated stream on stdin" sh -c "kgen -s 12 | head -c 5000 | kstat -"
must_fail 3 "a missing file is an I/O error" kstat "$T/does-not-exist.kg"
stderr_has "cannot open '$T/does-not-exist.kg': No such file or directory" "names the file and the reason"
must_fail 2 "no argument is a usage error" kstat
must_fail 2 "an unknown option is a usage error" kstat --bogus x
run_ok "--help exits 0" kstat --help
run_ok "--version exits 0" kstat --version
ok "--version lists build features" grep -q 'mpi=.* zlib=yes' "$T/out"
done_testing
