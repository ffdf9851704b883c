# tests/gpu/lib-gpu.sh: helpers of the GPU shell tests (t06*-gpu*.sh).
# Source after tests/lib.sh and need_gpu.
#
#   gpu_count                 GPUs nvidia-smi lists
#   gpu_only N                CUDA_VISIBLE_DEVICES = the first N visible GPUs
#   build_gpu_tests           build tests/gpu programs (one TAP line)
#   graph S                   $T/sS.kg (Kronecker scale S, made once)
#   part S RxC [OPTS...]      a partition of scale S for grid RxC (made once) in $PART
#   prun RxC CMD...           CMD on R*C ranks (mpirun; a plain process for 1x1)
#   sub_tap NAME CMD...       run a TAP-printing CMD; one TAP line here with its
#                             counts, its failures and timing lines as diagnostics
#   kbfs_wired                kbfs --help lists the CUDA options (--kernel, --transport)
#   need_cuda_build           skip_all unless the programs were built with the CUDA engine
# Logs of every sub-run go to $OUT/gpu-tests/ when OUT is set.
TB=$TOP/build/tests/gpu
GPULOG=
if [ -n "${OUT:-}" ]; then
	GPULOG=$OUT/gpu-tests
	mkdir -p "$GPULOG"
fi

gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }

gpu_only() {
	local n=$1 list
	if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
		list=$(echo "$CUDA_VISIBLE_DEVICES" | cut -d, -f1-"$n")
	else
		list=$(seq -s, 0 $((n - 1)))
	fi
	export CUDA_VISIBLE_DEVICES=$list
	echo "# CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
}

keep_log() { # keep_log NAME FILE
	[ -n "$GPULOG" ] || return 0
	cp "$2" "$GPULOG/$(echo "$1" | tr -c 'A-Za-z0-9._-' '_').log"
}

build_gpu_tests() {
	run_ok "build the CUDA test programs (tests/gpu/build.sh)" sh "$TOP/tests/gpu/build.sh"
	[ -x "$TB/test_engine" ] && [ -x "$TB/test_codec" ]
}

graph() {
	[ -f "$T/s$1.kg" ] || kgen -q -s "$1" -o "$T/s$1.kg" || { echo "Bail out! kgen -s $1"; exit 1; }
}

part() {
	local s=$1 g=$2
	shift 2
	PART="$T/s$s-$g$(echo "$*" | tr -d ' ')"
	graph "$s"
	if [ ! -d "$PART" ]; then
		kpart -q -R "${g%x*}" -C "${g#*x}" "$@" -o "$PART" "$T/s$s.kg" || { echo "Bail out! kpart $s $g $*"; exit 1; }
	fi
}

prun() {
	local g=$1
	shift
	local np=$((${g%x*} * ${g#*x}))
	# the five programs run through their bin-wrappers (lib.sh); the GPU
	# test programs are not on PATH, so KBFS_EXEC is put in front here
	case ${1##*/} in
	kgen | kpart | kbfs | kvalidate | kstat) ;;
	*) set -- ${KBFS_EXEC:-} "$@" ;;
	esac
	if [ "$np" -eq 1 ] && ! have_mpi; then
		"$@"
	else
		MPIRUN "$np" "$@"
	fi
}

sub_tap() {
	local name=$1
	shift
	_n=$((_n + 1))
	local log=$T/sub.$_n.log start end
	start=$(date +%s.%N)
	"$@" >"$log" 2>&1
	local rc=$?
	end=$(date +%s.%N)
	local okc nok secs
	okc=$(grep -c '^ok ' "$log")
	nok=$(grep -c '^not ok ' "$log")
	secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	keep_log "$name" "$log"
	if grep -q '^1\.\.0 # skip' "$log"; then
		echo "ok $_n # skip $name: $(grep '^1\.\.0' "$log" | head -1)"
		return 0
	fi
	if [ "$rc" -eq 0 ] && [ "$nok" -eq 0 ] && [ "$okc" -gt 0 ]; then
		echo "ok $_n - $name ($okc checks, ${secs} s)"
	else
		echo "not ok $_n - $name (exit $rc, $nok of $((okc + nok)) checks failed, ${secs} s)"
		grep -E '^not ok|^#  ' "$log" | head -40 | sed 's/^/#   /'
		grep -v -E '^ok |^not ok|^#' "$log" | tail -15 | sed 's/^/#   /'
		_failed=$((_failed + 1))
	fi
	grep '^# kernel ' "$log" | sed "s|^# |#   $name: |"
	return 0
}

# The output is read whole before grep looks at it: with pipefail (lib.sh), grep -q
# leaving at its first match sends SIGPIPE to a writer that has more to write (kbfs's
# --help passed stdio's 4 KiB buffer), and the pipe would read as a failure.
need_cuda_build() { local v; v=$(kgen --version) && grep -q 'cuda=yes' <<<"$v" || skip_all "this build has no CUDA engine"; }
kbfs_wired() { local h; h=$(kbfs --help 2>&1) && grep -q -- '--kernel' <<<"$h" && grep -q -- '--transport' <<<"$h"; }
