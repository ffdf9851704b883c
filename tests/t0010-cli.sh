#!/bin/bash
# Every program: --help, --version with build features, usage errors (exit 2,
# one line, in the same words: the common options come from kopt), and a man
# page with an EXIT STATUS section.
. "$(dirname "$0")/lib.sh"
for p in kgen kpart kbfs kvalidate kstat; do
	run_ok "$p --help exits 0" $p --help
	ok "$p --help starts with Usage" grep -q '^Usage: ' "$T/out"
	run_ok "$p -h exits 0" $p -h
	run_ok "$p --version exits 0" $p --version
	ok "$p --version names the program and version" grep -q "^$p (kbfs) [0-9]" "$T/out"
	ok "$p --version lists cuda, mpi, nccl and zlib" grep -q 'cuda=\(yes\|no\) mpi=\(yes\|no\) nccl=\(yes\|no\) zlib=yes' "$T/out"
	must_fail 2 "$p: an unknown option is a usage error" $p --no-such-option
	stderr_has "^$p: unrecognized option '--no-such-option'\$" "$p: one wording for an unknown long option, naming the program"
	must_fail 2 "$p: an unknown short option" $p -%
	stderr_has "^$p: unrecognized option '-%'\$" "$p: the same wording for a short one"
	must_fail 2 "$p: a missing value" $p --threads
	stderr_has "^$p: option '--threads' needs a value\$" "$p: one wording for a missing value"
	must_fail 2 "$p: a value for a flag" $p --help=yes
	stderr_has "^$p: option '--help' takes no value\$" "$p: one wording for a value a flag does not take"
	ok "$p --help lists the common options once" sh -c "$p --help | grep -c -- '--threads N' | grep -qx 1"
	ok "man page $p.1 exists and has EXIT STATUS" grep -q '^\.SH EXIT STATUS' "$TOP/man/$p.1"
	if command -v groff >/dev/null; then
		ok "man page $p.1 renders without warnings" sh -c "! groff -t -man -ww -Tutf8 '$TOP/man/$p.1' 2>&1 >/dev/null | grep -q ."
	else
		skip "no groff: rendering $p.1"
	fi
done
# bad numbers, per program
must_fail 2 "kgen -s 12abc" kgen -s 12abc
must_fail 2 "kgen -s -1" kgen -s -1
must_fail 2 "kgen -s 99" kgen -s 99
kgen -s 8 -o "$T/g.kg"
must_fail 2 "kpart -R 0" kpart -R 0 -C 1 -o "$T/p" "$T/g.kg"
must_fail 2 "kpart -C 2x" kpart -R 1 -C 2x -o "$T/p" "$T/g.kg"
kpart -q -R 1 -C 1 -o "$T/p" "$T/g.kg"
must_fail 2 "kbfs -n 0x" kbfs -n 0x "$T/p"
must_fail 2 "kbfs --alpha abc" kbfs --alpha abc "$T/p"
must_fail 2 "kvalidate --root -5" kvalidate --root -5 "$T/g.kg" "$T/g.kg"
must_fail 2 "kstat --threads 0" kstat --threads 0 "$T/g.kg"
for m in kedge.5 kpart.5 kpred.5 kbfs.7; do
	if command -v groff >/dev/null; then
		ok "man page $m renders without warnings" sh -c "test -f '$TOP/man/$m' && ! groff -t -man -ww -Tutf8 '$TOP/man/$m' 2>&1 >/dev/null | grep -q ."
	else
		ok "man page $m exists" test -f "$TOP/man/$m"
	fi
done
# every --kernel name is taken by every build (one without CUDA too: a
# name missing from its table crashed it): the missing partition is the error
# (the list comes from the refusal of a bogus name, which must itself work:
# a crash there left the loop nothing to try)
must_fail 2 "kbfs --kernel bogus: a usage error listing the kernels" kbfs --kernel bogus "$T/none.p"
kernels=$(sed -n 's/.* is not one of //p' "$T/err" | tr -d ',')
ok "... which names some" test -n "$kernels"
for k in $kernels; do
	must_fail 3 "kbfs --kernel $k on a missing partition: the partition is the error" kbfs --kernel "$k" "$T/none.p"
done

# make install puts programs, man pages and share/ under DESTDIR/PREFIX; the
# copying step never rebuilds bin/ (under SAN=1 it would put programs built
# with other flags in place in the middle of the run); MAKEFLAGS is dropped
# so that the make running the tests passes nothing on
sums() { cksum "$TOP"/bin/* | awk '{print $1, $2}'; }
before=$(sums)
if env -u MAKEFLAGS -u MFLAGS make -s -C "$TOP" install-files PREFIX=/usr/local DESTDIR="$T/stage" >/dev/null 2>"$T/err"; then
	is "$(sums)" "$before" "install-files leaves bin/ as it was built"
	ok "the installed programs are bin/'s" sh -c "for p in kgen kpart kbfs kvalidate kstat; do cmp -s '$TOP/bin/'\$p '$T/stage/usr/local/bin/'\$p || exit 1; done"
	ok "install: the five programs" sh -c "for p in kgen kpart kbfs kvalidate kstat; do test -x '$T/stage/usr/local/bin/'\$p || exit 1; done"
	ok "install: man pages in man1, man5, man7" sh -c "test -f '$T/stage/usr/local/share/man/man1/kbfs.1' && test -f '$T/stage/usr/local/share/man/man5/kedge.5' && test -f '$T/stage/usr/local/share/man/man7/kbfs.7'"
	ok "install: share/ (benchmarks and scripts)" test -f "$T/stage/usr/local/share/kbfs/bench/NOTES.md"
else
	ok "make install" false
fi
done_testing
