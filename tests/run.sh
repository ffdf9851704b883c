#!/bin/sh
# Run every test under prove: the C unit tests (build/tests/test_*) and the
# shell tests (tests/tNNNN-*.sh).  KBFS_TEST_ONLY=gpu runs the GPU tests only.
# PROVE_FLAGS adds prove options (e.g. -v); KBFS_EXEC runs the programs under
# a prefix (e.g. "valgrind -q --error-exitcode=99").
cd "$(dirname "$0")/.." || exit 3
if [ "${KBFS_TEST_ONLY:-}" = gpu ]; then
	set -- tests/t*-gpu*.sh
else
	set -- build/tests/test_* tests/t[0-9]*.sh
fi
# Without a controlling terminal (setsid): programs under mpirun show
# progress when the job was started from a terminal, and the tests must see
# the same output whether make test runs in one or in CI.
if command -v setsid >/dev/null 2>&1; then
	exec setsid -w prove -e '' ${PROVE_FLAGS:-} "$@"
fi
exec prove -e '' ${PROVE_FLAGS:-} "$@"
