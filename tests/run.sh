#!/bin/sh
# Run every test under prove: the C unit tests (build/tests/test_*) and the
# shell tests (tests/tNNNN-*.sh), or the tests named as arguments.
# KBFS_TEST_ONLY=gpu runs the GPU tests only.  PROVE_FLAGS adds prove
# options (e.g. -v); KBFS_EXEC runs the programs under a prefix (e.g.
# "valgrind -q --error-exitcode=99").
# KBFS_SAN=1 (make test SAN=1): the programs were built with ASan + UBSan;
# KBFS_VALGRIND=1 (make test VALGRIND=1): KBFS_EXEC is valgrind, logging to
# tests/out/valgrind.  Either way any report fails the run.
cd "$(dirname "$0")/.." || exit 3
if [ $# -gt 0 ]; then
	:
elif [ "${KBFS_TEST_ONLY:-}" = gpu ]; then
	set -- tests/t*-gpu*.sh
else
	set -- build/tests/test_* tests/t[0-9]*.sh
fi
# Without a controlling terminal (setsid): programs under mpirun show
# progress when the job was started from a terminal, and the tests must see
# the same output whether make test runs in one or in CI.
SETSID=
command -v setsid >/dev/null 2>&1 && SETSID="setsid -w"
if [ "${KBFS_SAN:-0}" = 1 ]; then
	keep=$PWD/tests/out/san
	# the sanitizers' files where every user a test runs as (t0020 runs
	# some commands as nobody) can read the suppressions and the mpirun
	# wrapper and write a report
	san=$(mktemp -d "${TMPDIR:-/tmp}/kbfs-san.XXXXXX") || exit 3
	chmod 755 "$san"
	cp tests/san/lsan.supp "$san/" && mkdir "$san/bin" && cp tests/san/bin/mpirun "$san/bin/" || exit 3
	reports=$san/reports
	# distinct exit codes, so a report never passes for a data error (exit 1)
	export ASAN_OPTIONS="exitcode=86:detect_leaks=1:log_path=$reports/asan:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export UBSAN_OPTIONS="halt_on_error=1:exitcode=87:print_stacktrace=1:log_path=$reports/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	export LSAN_OPTIONS="suppressions=$san/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	# Open MPI's leaks are suppressed by library: keep its plugins loaded,
	# so that their frames have names, and unwind fully under mpirun (the
	# wrapper from tests/san/bin)
	export OMPI_MCA_mca_base_component_disable_dlclose=1 KBFS_SAN=1
	export PATH="$san/bin:$PATH"
elif [ "${KBFS_VALGRIND:-0}" = 1 ]; then
	keep=$PWD/tests/out/valgrind
	reports=$keep
	# Open MPI's plugins stay loaded (their frames keep names for the
	# suppressions); hwloc's x86 backend only complains under valgrind
	export OMPI_MCA_mca_base_component_disable_dlclose=1 HWLOC_COMPONENTS=-x86
else
	exec $SETSID prove -e '' ${PROVE_FLAGS:-} "$@"
fi
rm -rf "$keep" && mkdir -p "$keep" "$reports" && chmod 1777 "$reports" || exit 3
# the programs the run started with must be the ones it ends with: a test
# that runs make with other flags would put unsanitized ones in their place
# and the rest of the run would report nothing
built=$(cksum bin/* 2>/dev/null)
$SETSID prove --timer -e '' ${PROVE_FLAGS:-} "$@"
rc=$?
if [ "$(cksum bin/* 2>/dev/null)" != "$built" ]; then
	echo "bin/ changed during the run (a test rebuilt the programs): the later tests did not run the instrumented ones" >&2
	rc=1
fi
# valgrind writes a log for every process: only the non-empty ones report
find "$reports" -type f -empty -delete
[ "$reports" = "$keep" ] || { cp "$reports"/* "$keep/" 2>/dev/null; rm -rf "$san"; }
n=$(ls "$keep" | wc -l)
if [ "$n" -gt 0 ]; then
	echo "$n report(s) in $keep:" >&2
	for f in "$keep"/*; do
		echo "==== $f" >&2
		head -40 "$f" >&2
	done
	exit 1
fi
echo "no sanitizer or valgrind report"
exit $rc
