#!/bin/bash
# Small conventions: bash completion installed and true to each program's
# options; a build without MPI started by mpirun says so; a build without
# CUDA knows every --kernel name; --version names the commit (from git, or
# "unknown" in a copy without .git, like a tarball).
. "$(dirname "$0")/lib.sh"
PROGS="kgen kpart kbfs kvalidate kstat"

# ---- bash completion ----
# (the copying alone, as t0010: a make install here would rebuild bin/ with
# the default flags in the middle of a sanitizer run)
if env -u MAKEFLAGS -u MFLAGS make -s -C "$TOP" install-files PREFIX=/usr DESTDIR="$T/stage" >/dev/null 2>"$T/err"; then
	ok "make install puts a completion under each program's name" sh -c \
		"for p in $PROGS; do test -f '$T/stage/usr/share/bash-completion/completions/'\$p || exit 1; done"
else
	ok "make install" false
fi
# comp WORDS...: what the completion offers for the last word
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kbfs_complete "$1"; echo "${COMPREPLY[*]}"' \
		_ "$TOP/share/bash-completion/kbfs" "$@"
}
is "$(comp kgen --imp)" "--import-format" "kgen --imp<TAB>"
is "$(comp kgen -f '')" "kedge text g500 g500v2 mtx sg" "kgen -f <TAB>: the output formats"
is "$(comp kbfs --direction b)" "bottom-up" "kbfs --direction b<TAB>"
is "$(comp kpart --relabel '')" "degree none" "kpart --relabel <TAB>"
# after mpirun: the words from the program on are the program's
compm() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kbfs_mpirun mpirun; echo "${COMPREPLY[*]}"' \
		_ "$TOP/share/bash-completion/kbfs" "$@"
}
is "$(compm mpirun -np 4 kbfs --direction b)" "bottom-up" "mpirun -np 4 kbfs --direction b<TAB>"
is "$(compm mpirun --allow-run-as-root --oversubscribe -np 4 kgen -f '')" "kedge text g500 g500v2 mtx sg" \
	"mpirun --allow-run-as-root --oversubscribe -np 4 kgen -f <TAB>"
is "$(compm mpirun -np 2 "$BIN/kbfs" --roots-f)" "--roots-from" "mpirun -np 2 /path/to/kbfs --roots-f<TAB>"
ok "mpirun -np 4 kvali<TAB>: the command" sh -c "echo '$(compm mpirun -np 4 kvali)' | grep -qw kvalidate"
ok "make install puts the completion under mpirun and mpiexec too" \
	test -f "$T/stage/usr/share/bash-completion/completions/mpirun" -a -f "$T/stage/usr/share/bash-completion/completions/mpiexec"
is "$(bash -c '. "$1"; complete -p mpirun' _ "$TOP/share/bash-completion/kbfs")" "complete -o default -o filenames -F _kbfs_mpirun mpirun" \
	"... and registers it for mpirun"
is "$(bash -c 'complete -F _other mpirun; . "$1"; complete -p mpirun' _ "$TOP/share/bash-completion/kbfs")" "complete -F _other mpirun" \
	"... but leaves another completion of mpirun alone"
for p in $PROGS; do
	want=$($p --help | sed -n 's/^ \{1,\}\(-[A-Za-z], \)\{0,1\}\(--[a-z0-9][a-z0-9-]*\).*/\2/p' | sort | tr '\n' ' ')
	is "$(comp $p -- | tr ' ' '\n' | sort | tr '\n' ' ')" "$want" "$p --<TAB>: every long option of $p --help"
done
# every choice the completion offers is one the program takes (not a usage error)
bad=""
while read -r prog opt choices; do
	for c in $choices; do
		case $prog in
		kgen) kgen -s 1 "$opt" "$c" -o /dev/null --force >/dev/null 2>&1 ;;
		kpart) kpart "$opt" "$c" -R 1 -C 1 -o "$T/nope.p" "$T/nope.kg" >/dev/null 2>&1 ;;
		kbfs) kbfs "$opt" "$c" "$T/nope.p" >/dev/null 2>&1 ;;
		esac
		rc=$?
		[ $rc -ne 2 ] && [ $rc -lt 128 ] || bad="$bad $prog $opt $c (exit $rc);"
	done
done < <(sed -n 's/^\t"\([a-z]*\) \(--[a-z0-9-]*\)") echo "\(.*\)" ;;$/\1 \2 \3/p' "$TOP/share/bash-completion/kbfs")
is "$bad" "" "every value the completion offers is accepted by its program (no usage error, no crash)"

# ---- --version names the commit ----
if [ -e "$TOP/.git" ] && head=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null); then
	for p in $PROGS; do
		got=$($p --version | sed -n 's/^commit: //p')
		ok "$p --version: commit $got is HEAD ($head), -dirty only with changes" \
			sh -c "[ '$got' = '$head' ] || { [ '$got' = '$head-dirty' ] && ! git -C '$TOP' diff --quiet HEAD --; }"
	done
else
	skip "not a git checkout: the commit is checked on the copy below"
fi

# ---- a build without MPI under mpirun; a build without CUDA ----
mkdir "$T/src"
cp -R "$TOP/Makefile" "$TOP/cmd" "$TOP/libcommon" "$TOP/gpu" "$T/src/"
if make -s -C "$T/src" -j2 MPI=0 CUDA=0 bin/kbfs >/dev/null 2>"$T/err"; then
	ok "a copy without .git builds with MPI=0" test -x "$T/src/bin/kbfs"
	is "$("$T/src/bin/kbfs" --version | sed -n 's/^commit: //p')" "unknown" "... and its --version says commit unknown"
	# the CUDA options' names come from the table the CUDA build has
	# (gpu/kgpu_names.c): --kernel edge, the last, once crashed here
	kgen -s 8 -o "$T/g1.kg" && kpart -q -R 1 -C 1 -o "$T/p1" "$T/g1.kg"
	"$T/src/bin/kbfs" -q --engine cpu --kernel edge -n 2 --json "$T/edge.json" "$T/p1" >/dev/null 2>"$T/err"
	is "$? $(sed -n 's/^    "kernel": "\(.*\)",$/\1/p' "$T/edge.json")" "0 edge" \
		"a build without CUDA takes --kernel edge and records it (kbfs --engine cpu)"
	"$T/src/bin/kbfs" --kernel nope "$T/p1" >/dev/null 2>"$T/err"
	is "$? $(grep -c "'nope' is not one of lb, merrill, vertex, vbfs, edge" "$T/err")" "2 1" \
		"... and names all five kernels when refusing one"
	if have_mpi; then
		kgen -s 8 -o "$T/g.kg" && kpart -q -R 2 -C 2 -o "$T/p" "$T/g.kg"
		MPIRUN 4 "$T/src/bin/kbfs" "$T/p" >"$T/out" 2>"$T/err"
		rc=$?
		is "$rc $(grep -c 'built without MPI, but 4 copies were started' "$T/err")" "2 1" \
			"kbfs built without MPI, under mpirun -np 4: exit 2, said once"
	else
		skip "no mpirun"
	fi
else
	ok "MPI=0 build" false
	sed 's/^/#   /' "$T/err" | head
fi
done_testing
