#!/bin/bash
# kbfs's validation on the GPU (--validator device, the CUDA engine's
# default): on grids 1x1, 1x2, 2x1, 2x2 and 2x3 (the ranks share one GPU),
# with the degree order (and the input order on 1x1), the device passes kbfs's own
# trees and the reference tree, and (1x1, 2x3) fails every corrupt tree of t0500
# (tests/lib-trees.sh, put in place of the search's with KBFS_TEST_TREE)
# and a wrong edge count, so the host's checker decides: the verdict is
# kvalidate's on the same file and partition, and the message the same as
# with --validator host.  Also u64 indices (kpart --wide) and u64 offsets
# (KBFS_CUDA_OFF64=1), the check's other template widths.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
. "$TOP/tests/lib-trees.sh"
need_python
gpu_only 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
kbfs_wired || skip_all "bin/kbfs has no CUDA engine"

S10=$VEC/s10
R10=$(head -1 "$S10/roots.txt")
PAR=$S10/parent.root0.ref3.0.1.txt
ref_edges 3.0.1 10 txt
C=$T/corrupt
mkdir -p "$C"
corrupt_trees "$S10/depth.root0.txt" "$PAR" "$T/kron-v3.0.1-s10-ef16.txt" "$R10" "$C"
ok "eight corrupt trees built" test "$(ls "$C"/rule-*.txt | wc -l)" -eq 8

# JSON checks without jq: the record is d, its roots r
jcheck() { # jcheck NAME FILE PYTHON-ASSERTION
	ok "$1" python3 -c "
import json, sys
d = json.load(open('$2'))
r = d['roots']
assert $3, (d['options'].get('validator'), [(x.get('valid'), x.get('validated_on'), x.get('device_check_failed')) for x in r])"
}

# fails_rule RULE NAME CMD...: CMD (a kbfs run with --json $T/bad.json) exits 1
# naming rule (RULE), and the device's check is what failed
fails_rule() {
	local rule=$1 name=$2
	shift 2
	_n=$((_n + 1))
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -eq 1 ] && grep -q "validation failed for root [0-9]*: rule ($rule)" "$T/err" &&
		python3 -c "import json, sys; sys.exit(not json.load(open('$T/bad.json'))['roots'][0]['device_check_failed'])"; then
		echo "ok $_n - $name: rule ($rule)"
	else
		echo "not ok $_n - $name (exit $rc, want 1 and rule ($rule))"
		sed 's/^/#   /' "$T/err" | head -5
		_failed=$((_failed + 1))
	fi
}

GRIDS=1x1
have_mpi && GRIDS="1x1 1x2 2x1 2x2 2x3"
for g in $GRIDS; do
	for order in degree none; do
		[ "$order" = none ] && [ "$g" != 1x1 ] && continue
		part 10 "$g" --relabel "$order"
		P=$PART
		what="$g, --relabel $order"
		# kbfs's own trees
		run_ok "$what: 16 searches validated on the device" prun "$g" kbfs --engine cuda -n 16 --json "$T/own.json" "$P"
		jcheck "$what: every tree passed on the device" "$T/own.json" \
			"d['options']['validator'] == 'device' and len(r) == 16 and all(x['valid'] and x['validated_on'] == 'device' and not x['device_check_failed'] for x in r)"
		# the reference's tree in place of the search's
		run_ok "$what: the reference tree passes on the device" \
			prun "$g" env KBFS_TEST_TREE="$PAR" kbfs --engine cuda -r "$R10" --json "$T/ref.json" "$P"
		jcheck "$what: reference tree checked on the device" "$T/ref.json" \
			"r[0]['valid'] and r[0]['validated_on'] == 'device'"
		# the corrupt trees on 1x1 (both orders) and 2x3; 1x2, 2x1 and 2x2 share their code
		[ "$g" = 1x2 ] || [ "$g" = 2x1 ] || [ "$g" = 2x2 ] && continue
		for f in "$C"/rule-*.txt; do
			rule=$(basename "$f" | sed 's/^rule-\(.\).*/\1/')
			name=$(basename "$f" .txt)
			_n=$((_n + 1))
			prun "$g" env KBFS_TEST_TREE="$f" kbfs --engine cuda -r "$R10" --json "$T/bad.json" "$P" >"$T/out" 2>"$T/err.dev"
			rc=$?
			prun "$g" env KBFS_TEST_TREE="$f" kbfs --engine cuda --validator host -r "$R10" "$P" >/dev/null 2>"$T/err.host"
			prun "$g" kvalidate --root "$R10" "$P" "$f" >"$T/kv" 2>&1
			dev=$(grep -o 'validation failed for root [0-9]*: rule ([a-f]).*' "$T/err.dev")
			host=$(grep -o 'validation failed for root [0-9]*: rule ([a-f]).*' "$T/err.host")
			kv=$(grep -o 'invalid: rule ([a-f])' "$T/kv" | head -1)
			flagged=$(python3 -c "import json; print(json.load(open('$T/bad.json'))['roots'][0]['device_check_failed'])" 2>/dev/null)
			if [ "$rc" -eq 1 ] && [ "$flagged" = True ] && [ -n "$dev" ] && [ "$dev" = "$host" ] &&
				echo "$dev" | grep -q "rule ($rule)" && [ "$kv" = "invalid: rule ($rule)" ]; then
				echo "ok $_n - $what: $name: the device fails it, verdict rule ($rule) as kvalidate's, message as --validator host's"
			else
				echo "not ok $_n - $what: $name (exit $rc, device flagged: $flagged, kvalidate: '$kv')"
				echo "#   device: $dev"
				echo "#   host:   $host"
				sed 's/^/#   /' "$T/err.dev" | head -5
				_failed=$((_failed + 1))
			fi
		done
		fails_rule f "$what: a claimed edge count one too many fails on the device" \
			prun "$g" env KBFS_TEST_NEDGE_OFF=1 kbfs --engine cuda -r "$R10" --json "$T/bad.json" "$P"
	done
done

# the other index and offset widths of the check (u64 local indices, u64 offsets)
part 10 1x1 --wide
run_ok "u64 indices (kpart --wide): 16 searches validated on the device" kbfs --engine cuda -n 16 --json "$T/wide.json" "$PART"
jcheck "u64 indices: every tree passed on the device" "$T/wide.json" \
	"all(x['valid'] and x['validated_on'] == 'device' for x in r)"
fails_rule c "u64 indices: a cycle fails on the device" env KBFS_TEST_TREE="$C/rule-c-cycle.txt" \
	kbfs --engine cuda -r "$R10" --json "$T/bad.json" "$PART"
part 10 1x1
run_ok "u64 offsets (KBFS_CUDA_OFF64=1): 16 searches validated on the device" \
	env KBFS_CUDA_OFF64=1 kbfs --engine cuda -n 16 --json "$T/off64.json" "$PART"
jcheck "u64 offsets: every tree passed on the device" "$T/off64.json" \
	"all(x['valid'] and x['validated_on'] == 'device' for x in r)"
fails_rule d "u64 offsets: a skipped level fails on the device" env KBFS_CUDA_OFF64=1 \
	KBFS_TEST_TREE="$C/rule-d-skipped-level.txt" kbfs --engine cuda -r "$R10" --json "$T/bad.json" "$PART"

# the host validator stays what --validator host and the CPU engine use
part 12 1x1
run_ok "--validator host: 8 searches validated on the host" kbfs --engine cuda --validator host -n 8 --json "$T/host.json" "$PART"
jcheck "--validator host: every tree checked on the host" "$T/host.json" \
	"d['options']['validator'] == 'host' and all(x['valid'] and x['validated_on'] == 'host' for x in r)"
run_ok "--no-validate: nothing validated" kbfs --engine cuda --no-validate -n 4 --json "$T/none.json" "$PART"
jcheck "--no-validate: validator none" "$T/none.json" "d['options']['validator'] == 'none'"
run_ok "--dry-run lists the validation's arrays" kbfs --engine cuda --dry-run "$PART"
ok "--dry-run: val.levels and val.tree" grep -q "val.levels" "$T/out"
run_ok "--dry-run --validator host: no validation arrays" kbfs --engine cuda --validator host --dry-run "$PART"
ok "--dry-run --validator host: no val.levels bytes" awk '$1=="val.levels" && $2!=0 {exit 1}' "$T/out"
done_testing
