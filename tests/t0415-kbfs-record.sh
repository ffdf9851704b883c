#!/bin/bash
# What a run reports about its graph and itself: SCALE of an imported graph
# (ceil(log2 nv)), graph_generation carried from kgen through the edge file
# and the partition (and said when it is not), and the JSON's provenance
# (date, commit, CPU, MPI library).
. "$(dirname "$0")/lib.sh"
need_python
export OMP_NUM_THREADS=1
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }
block() { sed -n "s/^$1: *//p" "$T/out"; }

# ---- SCALE: ceil(log2 nv) for imported graphs ----
for nv in 2 4 5 1000 1024 1025; do
	want=0
	while [ $((1 << want)) -lt "$nv" ]; do want=$((want + 1)); done
	# a path through vertices 0 .. nv-1
	awk -v n="$nv" 'BEGIN { for (v = 1; v < n; v++) print v - 1, v }' >"$T/path.txt"
	kgen -q --from "$T/path.txt" -o "$T/path.kg" && kpart -q -R 1 -C 1 --force -o "$T/pp" "$T/path.kg"
	kbfs -n 1 --json "$T/j.json" "$T/pp" >"$T/out" 2>"$T/err"
	is "$(block SCALE) $(jget "$T/j.json" scale)" "$want $want" "an imported graph of $nv vertices: SCALE $want (block and JSON)"
done
kgen -q -s 9 -e 4 -o "$T/k.kg" && kpart -q -R 1 -C 1 -o "$T/kp" "$T/k.kg"
kbfs -n 1 "$T/kp" >"$T/out"
is "$(block SCALE) $(block edgefactor)" "9 4" "a Kronecker graph: the generator's SCALE and edgefactor"

# ---- graph_generation from kgen, through the edge file and the partition ----
if python3 -c "import os,sys; open(sys.argv[1],'w').close(); os.setxattr(sys.argv[1], 'user.kbfs.t', b'1')" "$T/x" 2>/dev/null; then
	kgen -s 12 -o "$T/g.kg"
	gt=$(python3 -c "import os,sys; print(os.getxattr(sys.argv[1], 'user.kbfs.generation_time').decode())" "$T/g.kg")
	ok "kgen records its time ($gt s) as an attribute of the edge file" test -n "$gt"
	kgen -s 12 -o "$T/g2.kg"
	ok "... the file's bytes stay those of the same graph" cmp -s "$T/g.kg" "$T/g2.kg"
	kpart -q -R 1 -C 2 -o "$T/p" "$T/g.kg"
	ok "kpart keeps it in build-info" grep -q "^generation_time = $gt\$" "$T/p/build-info"
	MPIRUN 2 kbfs -n 2 --json "$T/j.json" "$T/p" >"$T/out" 2>"$T/err"
	is "$(jget "$T/j.json" generation_time) $(jget "$T/j.json" generation_time_from)" \
		"$(python3 -c "print(float('$gt'))") kgen" "kbfs reports it: JSON generation_time, from kgen"
	is "$(block graph_generation)" "$(printf '%g' "$gt")" "... and the block's graph_generation"
	ok "... without a warning" sh -c "! grep -q 'load time' '$T/err'"
	# a pipe carries no attribute: the load time, and kbfs says so
	kgen -s 12 | kpart -q -R 1 -C 1 -o "$T/pp2" -
	kbfs -n 1 --json "$T/j.json" "$T/pp2" >"$T/out" 2>"$T/err"
	is "$(jget "$T/j.json" generation_time_from)" "load" "kgen | kpart -: no generation time, the load time from 'load'"
	ok "... and a warning says graph_generation is the load time" grep -q "warning: graph_generation is the partition's load time" "$T/err"
	cp "$T/g.kg" "$T/copy.kg"
	kpart -q -R 1 -C 1 -o "$T/pc" "$T/copy.kg"
	ok "a copy without --preserve=xattr loses it too" sh -c "! grep -q generation_time '$T/pc/build-info'"
	cp --preserve=xattr "$T/g.kg" "$T/copy2.kg"
	kpart -q -R 1 -C 1 -o "$T/pc2" "$T/copy2.kg"
	ok "cp --preserve=xattr keeps it" grep -q "^generation_time = $gt\$" "$T/pc2/build-info"
	kgen -q --from "$T/g.kg" -z -o "$T/z.kg"
	is "$(python3 -c "import os,sys; print(os.getxattr(sys.argv[1], 'user.kbfs.generation_time').decode())" "$T/z.kg")" "$gt" \
		"kgen --from g.kg (a conversion) copies the time, it does not replace it"
else
	skip "no user extended attributes on $T: the generation time cannot travel with the file here"
fi

# ---- provenance in the JSON ----
kgen -q -s 10 -o "$T/s.kg" && kpart -q -R 1 -C 1 -o "$T/s" "$T/s.kg"
before=$(date -u +%s)
kbfs -n 1 --json "$T/j.json" "$T/s" >/dev/null
after=$(date -u +%s)
d=$(jget "$T/j.json" date)
ds=$(date -u -d "$d" +%s 2>/dev/null || echo 0)
ok "date: the run's start in UTC ($d)" sh -c "echo '$d' | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' && [ $ds -ge $((before - 1)) ] && [ $ds -le $after ]"
is "$(jget "$T/j.json" commit)" "$(kbfs --version | sed -n 's/^commit: //p')" "commit: the one kbfs --version names"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
if [ -n "$cpu" ]; then
	is "$(jget "$T/j.json" cpu)" "$cpu" "cpu: /proc/cpuinfo's model name"
else
	ok "cpu: recorded" test -n "$(jget "$T/j.json" cpu)"
fi
if have_mpi && kbfs --version | grep -q 'mpi=yes'; then
	v=$(mpirun --version 2>/dev/null | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
	ok "mpi_library: the MPI library's version string (mpirun says $v)" sh -c "jq_v=\$(python3 -c \"import json; print(json.load(open('$T/j.json'))['mpi_library'])\"); echo \"\$jq_v\" | grep -q '$v'"
else
	skip "no MPI build"
fi

# ---- the predecessor step's time, and the phases' spread over the ranks ----
ok "pred_time: every root's, inside its time" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['roots'] and all(0 <= r['pred_time'] <= r['time'] for r in d['roots']), d['roots']" "$T/j.json"
if have_mpi && kbfs --version | grep -q 'mpi=yes'; then
	kpart -q -R 1 -C 2 --force -o "$T/p2" "$T/k.kg"
	MPIRUN 2 kbfs -v -n 2 "$T/p2" >"$T/out" 2>"$T/err"
	ok "-v on two ranks: each phase's least and most over the ranks, per search" \
		sh -c "[ \$(grep -c 'us per search over the ranks (least-most): expand [0-9.]*-[0-9.]*, local .*predecessors [0-9.]*-[0-9.]*' '$T/err') -ge 2 ]"
	ok "-v: where the set-up's time went, once, before the first search" \
		sh -c "[ \$(grep -c '^kbfs\[rank 0\]: set-up in [0-9.]* s: load [0-9.]*, engine [0-9.]* .*transport [0-9.]*, roots [0-9.]*, the rest [0-9.]*' '$T/err') = 1 ] &&
			awk '/set-up in/ {s=1} /us per search/ && !s {exit 1}' '$T/err'"
else
	skip "no MPI build"
fi
done_testing
