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
exec prove -e '' ${PROVE_FLAGS:-} "$@"
