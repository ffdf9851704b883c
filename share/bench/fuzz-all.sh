#!/bin/sh
# fuzz-all.sh: run every libFuzzer harness of tests/fuzz for a while, all at
# once, and write what each did to a summary file.
#
#   share/bench/fuzz-all.sh [--seconds N] [--cores C] [--bin DIR] [--out DIR]
#                           [--summary FILE]
#
# --bin DIR: prebuilt harnesses (fuzz_*) with their seeds in DIR/seeds, as
#   `make fuzz-build` leaves them in build/fuzz (copy that directory to run
#   them on a machine without clang); without --bin, this script runs
#   `make fuzz-build` first (which needs clang with libFuzzer).
# --seconds N: each harness fuzzes for N seconds (default 60); all run at
#   the same time, so the whole run takes about N seconds.
# --cores C: processes to use in all (default: every online CPU); each
#   harness gets C / harnesses of them (libFuzzer -fork), at least one, and
#   the cores left over go one at a time, in turn, to the harnesses --slow
#   names.
# --slow 'NAME...': the harnesses that get the spare cores (default
#   'kedge kpart_rank kio_lines kpart_manifest', the slowest per execution
#   measured on one core, 1.4-2.5 K/s where the others run 3-9 K/s).
# --out DIR: corpora, crash/timeout/OOM inputs and logs (default
#   build/fuzz/run); each harness's corpus grows from run to run.
# --summary FILE (or $FUZZ_SUMMARY): one line per harness: name, executions,
#   crashes, timeouts, out-of-memory exits, seconds; default OUT/summary.txt.
# Exit status: 0 when no harness met a crash, timeout or OOM, 1 otherwise,
# 2 on a usage error, 4 when the harnesses cannot be built or found.
set -u
seconds=60 cores= bin= out= summary=${FUZZ_SUMMARY:-}
slow='kedge kpart_rank kio_lines kpart_manifest'
top=$(cd "$(dirname "$0")/../.." && pwd)
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--cores) cores=$2; shift 2 ;;
	--bin) bin=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--summary) summary=$2; shift 2 ;;
	--slow) slow=$2; shift 2 ;;
	-h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "fuzz-all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $seconds in '' | *[!0-9]*) echo "fuzz-all.sh: --seconds wants a whole number" >&2; exit 2 ;; esac
[ -n "$cores" ] || cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
case $cores in '' | *[!0-9]* | 0) echo "fuzz-all.sh: --cores wants a whole number from 1" >&2; exit 2 ;; esac
if [ -z "$bin" ]; then
	if ! command -v clang >/dev/null 2>&1; then
		echo "fuzz-all.sh: no clang here to build the harnesses: build them where clang is" \
			"(make fuzz-build), copy build/fuzz, and give it with --bin" >&2
		exit 4
	fi
	make -C "$top" --no-print-directory fuzz-build || exit 4
	bin=$top/build/fuzz
fi
bin=$(cd "$bin" 2>/dev/null && pwd) || { echo "fuzz-all.sh: no directory '$bin'" >&2; exit 4; }
set -- "$bin"/fuzz_*
[ -x "$1" ] || { echo "fuzz-all.sh: no fuzz_* harness in '$bin'" >&2; exit 4; }
[ -n "$out" ] || out=$top/build/fuzz/run
mkdir -p "$out" && out=$(cd "$out" && pwd)
[ -n "$summary" ] || summary=$out/summary.txt
n=$#
per=$((cores / n))
[ "$per" -ge 1 ] || per=1
# at most `cores` harnesses at a time when there are more harnesses than cores
slots=$cores
[ "$slots" -le "$n" ] || slots=$n
rounds=$(((n + slots - 1) / slots))
# the spare cores (only when every harness runs at once), one per slow
# harness in turn: extra_NAME is how many more processes NAME gets
spare=0
[ "$rounds" -eq 1 ] && spare=$((cores - per * n))
for name in $slow; do eval "extra_$name=0"; done
while [ "$spare" -gt 0 ] && [ -n "$slow" ]; do
	for name in $slow; do
		[ "$spare" -gt 0 ] || break
		eval "extra_$name=\$((extra_$name + 1))"
		spare=$((spare - 1))
	done
done
extra=
for name in $slow; do
	eval "x=\$extra_$name"
	[ "$x" -gt 0 ] && extra="$extra, $name +$x"
done
echo "fuzz-all.sh: $n harnesses, ${seconds}s each, $slots at a time x $per process(es)$extra, about $((rounds * seconds))s" >&2

run_one() { # run_one HARNESS
	h=$1
	name=$(basename "$h")
	c=$out/corpus/$name a=$out/artifacts/$name
	mkdir -p "$c" "$a"
	k=$per
	eval "k=\$((per + \${extra_${name#fuzz_}:-0}))"
	[ -d "$bin/seeds/${name#fuzz_}" ] && cp -n "$bin/seeds/${name#fuzz_}"/* "$c/" 2>/dev/null
	# -fork: crashes, timeouts and OOMs are counted and kept, and the run
	# goes on; readers' own messages (stderr) are closed
	"$h" -fork="$k" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
		-artifact_prefix="$a/" "$c" >"$out/$name.log" 2>&1
	echo $? >"$out/$name.rc"
}

start=$(date +%s)
i=0
for h in "$@"; do
	run_one "$h" &
	i=$((i + 1))
	[ $((i % slots)) -eq 0 ] && wait
done
wait
took=$(($(date +%s) - start))

bad=0
printf '%-26s %14s %8s %9s %6s %8s\n' harness executions crashes timeouts ooms seconds >"$summary"
for h in "$@"; do
	name=$(basename "$h")
	log=$out/$name.log
	# the last status line of fork mode: "#N: cov: ... oom/timeout/crash: O/T/C time: Ss ..."
	line=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
	execs=$(printf '%s\n' "$line" | sed -n 's/^#\([0-9]*\):.*/\1/p')
	otc=$(printf '%s\n' "$line" | sed -n 's/.*oom\/timeout\/crash: \([0-9]*\/[0-9]*\/[0-9]*\).*/\1/p')
	secs=$(printf '%s\n' "$line" | sed -n 's/.* time: \([0-9]*\)s.*/\1/p')
	oom=${otc%%/*} rest=${otc#*/}
	tmo=${rest%%/*} crash=${rest#*/}
	[ -n "$otc" ] || { oom=? tmo=? crash=?; }
	art=$(ls "$out/artifacts/$name" 2>/dev/null | grep -c -E '^(crash|timeout|oom|leak|slow-unit)-' || true)
	printf '%-26s %14s %8s %9s %6s %8s\n' "${name#fuzz_}" "${execs:-?}" "$crash" "$tmo" "$oom" "${secs:-?}" >>"$summary"
	if [ "$crash" != 0 ] || [ "$tmo" != 0 ] || [ "$oom" != 0 ] || [ "$art" -gt 0 ]; then
		bad=1
		echo "fuzz-all.sh: $name: findings in $out/artifacts/$name ($log)" >&2
	fi
done
echo "# ${took}s wall, $cores core(s), $(uname -n), $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$summary"
cat "$summary"
exit $bad
