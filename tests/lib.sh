# tests/lib.sh: a small TAP library for the shell tests.  Source it, then call
# plan-less assertions; finish with `done_testing`.
#
#   ok COND_CMD... / is GOT WANT NAME / run_ok NAME CMD... /
#   must_fail CODE NAME CMD...  (CMD must exit with CODE, not crash, and print
#   exactly one line on stderr) / skip_all REASON / need_mpi / need_gpu
set -u
set -o pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=$TOP/bin
# the Graph500 reference's vectors, carried in the repository: roots, nedge
# per root, depths and a tree as files, the edge lists as SHA-256 digests
VEC=$TOP/tests/vectors
FIX=$TOP/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/kbfs-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
# bin-wrappers, as git's test suite has them: every program a test calls by
# name (directly, in a pipe, under mpirun on every rank) is a wrapper ahead
# of bin/ on PATH that runs it under KBFS_EXEC (e.g. KBFS_EXEC="valgrind -q
# --error-exitcode=99"; empty: as it is)
WRAP=$T/bin-wrappers
mkdir -p "$WRAP"
for _p in kgen kpart kbfs kvalidate kstat; do
	printf '#!/bin/sh\nexec %s "%s/%s" "$@"\n' "${KBFS_EXEC:-}" "$BIN" "$_p" >"$WRAP/$_p"
	chmod +x "$WRAP/$_p"
done
export PATH=$WRAP:$BIN:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
_n=0
_failed=0

ok() {
	_n=$((_n + 1))
	local name=$1
	shift
	if "$@"; then
		echo "ok $_n - $name"
	else
		echo "not ok $_n - $name"
		_failed=$((_failed + 1))
	fi
}

is() {
	_n=$((_n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $_n - $3"
	else
		echo "not ok $_n - $3"
		echo "#   got:  '$1'"
		echo "#   want: '$2'"
		_failed=$((_failed + 1))
	fi
}

# run_ok NAME CMD...: CMD must exit 0
run_ok() {
	local name=$1
	shift
	_n=$((_n + 1))
	if "$@" >"$T/out" 2>"$T/err"; then
		echo "ok $_n - $name"
	else
		local rc=$?
		echo "not ok $_n - $name (exit $rc)"
		sed 's/^/#   /' "$T/err" | head -20
		_failed=$((_failed + 1))
	fi
}

# must_fail CODE NAME CMD...: exit CODE, one line on stderr naming the program
must_fail() {
	local code=$1 name=$2
	shift 2
	_n=$((_n + 1))
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	local lines
	lines=$(grep -vc "^Try '" "$T/err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ]; then
		echo "ok $_n - $name (exit $rc: $(grep -v "^Try '" "$T/err"))"
	else
		echo "not ok $_n - $name (exit $rc, want $code; $lines stderr lines)"
		sed 's/^/#   /' "$T/err" | head -10
		_failed=$((_failed + 1))
	fi
}

# refuse CODE NAME PATTERN CMD...: CMD exits CODE within TO seconds (20
# unless set) with one line on stderr matching PATTERN, and prints nothing
# on stdout
refuse() {
	local code=$1 name=$2 pat=$3
	shift 3
	must_fail "$code" "$name" timeout "${TO:-20}" "$@"
	stderr_has "$pat" "... $pat"
	ok "... nothing on standard output" test ! -s "$T/out"
}

# stderr_has PATTERN NAME: the last command's stderr matches PATTERN
stderr_has() {
	_n=$((_n + 1))
	if grep -q -- "$1" "$T/err"; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2 (stderr lacks '$1')"
		sed 's/^/#   /' "$T/err" | head -10
		_failed=$((_failed + 1))
	fi
}

skip() {
	_n=$((_n + 1))
	echo "ok $_n # skip $*"
}

skip_all() {
	echo "1..0 # skip $*"
	exit 0
}

have_mpi() { command -v mpirun >/dev/null 2>&1; }
need_mpi() { have_mpi || skip_all "no mpirun"; }
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }
need_gpu() { have_gpu || skip_all "no GPU"; }
# the tests that check JSON or SVG through python3 (make test's dependency
# check asks for one that runs; run by hand, they skip without it)
have_python() { python3 -c 'import json, xml.dom.minidom' >/dev/null 2>&1; }
need_python() { have_python || skip_all "python3 does not run (python3 -c 'import json, xml.dom.minidom')"; }

# MPIRUN NP CMD...: run under mpirun with the settings a root CI needs
# (MPI_TIMEOUT=S: killed after S seconds, exit 124)
MPIRUN() {
	local np=$1
	shift
	local pre=
	[ -n "${MPI_TIMEOUT:-}" ] && pre="timeout $MPI_TIMEOUT"
	$pre mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"
}

# same_depths A B: every depth-*.txt of run A equals B's file of the same
# name, and there is at least one
same_depths() {
	local f n=0
	for f in "$1"/depth-*.txt; do
		[ -f "$f" ] || return 1
		cmp -s "$f" "$2/$(basename "$f")" || { echo "#   $(basename "$f") differs"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# kpart_rows DIR RANKFILE PERL: rank file RANKFILE of partition DIR (format 2:
# colptr, rowidx, rowptr, tdeg, orig; 4-byte offsets and indices) with its
# row offsets @r changed by PERL, every checksum made right again (kpart(5))
kpart_rows() { kpart_array rowptr "$@"; }
# kpart_rowidx DIR FILE CODE: the same for the CSC's row indices (@r, nnz
# entries)
kpart_rowidx() { kpart_array rowidx "$@"; }
kpart_array() {
	perl -MCompress::Zlib -e '
		my ($which, $d, $f, $code) = @ARGV; local $/;
		open(my $m, "<", "$d/manifest") or die; my $man = <$m>; close $m;
		my ($N) = $man =~ /^N = (\d+)$/m; my ($R) = $man =~ /^R = (\d+)$/m; my ($C) = $man =~ /^C = (\d+)$/m;
		my ($k) = $f =~ /rank-(\d+)/; my ($nnz) = $man =~ /^rank\.$k\.nnz = (\d+)$/m or die;
		open(my $r, "<:raw", "$d/$f") or die; my $b = <$r>; close $r;
		my $at = 96 + 4 * ($N / $C + 1) + 4 * $nnz, $n = $N / $R + 1;
		($at, $n) = (96 + 4 * ($N / $C + 1), $nnz) if $which eq "rowidx";
		my @r = unpack("V*", substr($b, $at, 4 * $n));
		eval $code; die $@ if $@;
		substr($b, $at, 4 * $n) = pack("V*", @r);
		my $body = substr($b, 0, length($b) - 20);
		my $t = "KEND" . pack("Q<V", $nnz, crc32($body));
		$b = $body . $t . pack("V", crc32($t));
		open($r, ">:raw", "$d/$f") or die; print $r $b; close $r;
		my $c = sprintf("%08x", crc32($b));
		$man =~ s/^(rank\.$k\.crc32 = )\w+$/$1$c/m;
		$man =~ s/^checksum = .*\n//m;
		$man .= sprintf("checksum = %08x\n", crc32($man));
		open($m, ">", "$d/manifest") or die; print $m $man; close $m;
	' "$@"
}
# same_partition A B: partition B has a manifest, and A's manifest and
# every rank file of A are the same bytes in B (build-info, the run's
# timings and host, is meant to differ)
same_partition() {
	[ -f "$2/manifest" ] && (cd "$1" && for f in manifest rank-*.kpart; do cmp -s "$f" "$2/$f" || exit 1; done)
}

# same_but KEYS A B: A's rank files (one at least) are B's bytes, and the
# two manifests are the same but for the keys matching the extended regular
# expression KEYS (and the checksum over them), which B has
same_but() {
	local f n=0
	for f in "$2"/rank-*.kpart; do
		[ -f "$f" ] && cmp -s "$f" "$3/${f##*/}" || { echo "#   ${f##*/} differs"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] && [ "$(grep -Ec "^($1) = " "$3/manifest")" -gt 0 ] &&
		cmp -s <(grep -Ev "^($1|checksum) = " "$2/manifest") <(grep -Ev "^($1|checksum) = " "$3/manifest")
}

# vector_sha NAME: the SHA-256 tests/vectors/SHA256SUMS records for NAME
vector_sha() { awk -v n="./$1" '$2 == n {print $1}' "$VEC/SHA256SUMS"; }
sha256_of() { sha256sum <"$1" | cut -d' ' -f1; }

# ref_edges VERSION SCALE txt|bin: write kgen's edge list in the reference's
# layout to $T/kron-vVERSION-sSCALE-ef16.EXT; Bail out! unless its SHA-256
# is the reference file's
ref_edges() {
	local v=$1 s=$2 x=$3 g=3 fmt=text
	local name=kron-v$v-s$s-ef16.$x
	[ "$v" = 2.1.4 ] && g=2
	[ "$x" = bin ] && { [ $g = 3 ] && fmt=g500 || fmt=g500v2; }
	kgen -s "$s" --g500-version $g -f $fmt -o "$T/$name" || { echo "Bail out! kgen -s $s -f $fmt"; exit 1; }
	local want got
	want=$(vector_sha "$name")
	got=$(sha256_of "$T/$name")
	[ -n "$want" ] && [ "$got" = "$want" ] || { echo "Bail out! $name: SHA-256 $got, want '$want'"; exit 1; }
}

done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
}

# fetch_metis: Debian's libmetis-doc graphs (4elt, copter2, mdual) into
# tests/out/metis; prints the graphs' directory, or fails (then skip visibly).
fetch_metis() {
	local dir=$TOP/tests/out/metis
	local g=$dir/usr/share/doc/libmetis-dev/examples/graphs
	if [ ! -d "$g" ]; then
		mkdir -p "$dir" || return 1
		(
			cd "$dir" || exit 1
			apt-get download libmetis-doc >/dev/null 2>&1 ||
				{ [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 &&
					apt-get download libmetis-doc >/dev/null 2>&1; } || exit 1
			dpkg-deb -x libmetis-doc_*.deb . 2>/dev/null
		) || return 1
	fi
	[ -d "$g" ] || return 1
	echo "$g"
}
