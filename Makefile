# kbfs — breadth-first search on huge graphs across many GPUs.
#
#   make            build bin/ (kgen kpart kbfs kvalidate kstat, and the script
#                   kbfs-run), one job per core
#   make demo       install missing packages, then run the whole pipeline on a small graph
#   make test       install missing packages, then run every test (TAP, under prove)
#   make test-gpu   the GPU tests (skipped visibly without a GPU)
#   make layers     libcommon's layers kept (libcommon/README.md; part of make test)
#   make bench      the benchmarks in share/bench (not tests)
#   make install    PREFIX=/usr/local DESTDIR= (programs, man pages, share/, bash completion;
#                   install-files: the same copying alone, no build)
#
# Switches: MPI=0 (serial build, no mpicc), CUDA=0 (no GPU engine; the
# default when nvcc is missing or no GPU is visible), CUDA=1 (the GPU engine
# without a GPU here, for GPUs elsewhere), NCCL=0,
# NVCC_GENCODE=..., V=1 (show commands), OPT=-O3,
# SAN=1 (AddressSanitizer + UndefinedBehaviorSanitizer: `make test SAN=1`
# fails on any report), VALGRIND=1 (make test: every program under valgrind).

PREFIX    ?= /usr/local
DESTDIR   ?=
bindir    ?= $(PREFIX)/bin
mandir    ?= $(PREFIX)/share/man
man1dir   ?= $(mandir)/man1
man5dir   ?= $(mandir)/man5
man7dir   ?= $(mandir)/man7
sharedir  ?= $(PREFIX)/share/kbfs
bashcompdir ?= $(PREFIX)/share/bash-completion/completions

VERSION   := 0.1.0
OPT       ?= -O3
CSTD      := -std=c11
WARN      := -Wall -Wextra -Wno-unused-parameter
# libcommon's layers (libcommon/README.md), lowest first
LIB_LAYERS := base formats graph report
LIB_INC   := $(LIB_LAYERS:%=-Ilibcommon/%)
CPPFLAGS  += -D_GNU_SOURCE $(LIB_INC) -Igpu -Ibuild -DKBFS_VERSION='"$(VERSION)"'
CFLAGS    ?= $(OPT) -g
LDLIBS    += -lz -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---- feature detection ---------------------------------------------------
MPICC_FOUND := $(shell command -v mpicc 2>/dev/null)
MPI ?= $(if $(MPICC_FOUND),1,0)
ifeq ($(MPI),1)
CC := mpicc
else
CC ?= gcc
$(info kbfs: mpi off ($(if $(MPICC_FOUND),MPI=0,no mpicc: install libopenmpi-dev)) - programs run as a single process)
endif

NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
# CUDA defaults to on when nvcc is found and a GPU is visible (nvidia-smi
# lists one).  nvcc without a GPU (a laptop, a CI runner, a login node)
# builds the CPU engine only, about a quarter of the time (12.6 s against
# 55 s with -j2 on 2 cores), and says so in one line; CUDA=1 builds the GPU
# engine anyway, for GPUs elsewhere, and make test compiles the CUDA
# sources there all the same (cuda-check), so they never go unbuilt.
ifeq ($(origin CUDA),undefined)
ifneq ($(NVCC),)
CUDA := $(if $(shell nvidia-smi -L 2>/dev/null | grep '^GPU'),1,0)
CUDA_NO_GPU := $(filter 0,$(CUDA))
else
CUDA := 0
endif
endif
ifneq ($(NVCC),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVCC_GENCODE ?= -gencode arch=compute_90,code=sm_90
NCCL_HDR := $(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h /usr/local/include/nccl.h))
NVCCFLAGS ?= -O3 -g -lineinfo
NVCCFLAGS += -std=c++17 $(NVCC_GENCODE) -Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-fopenmp
endif
ifeq ($(CUDA),1)
NCCL ?= $(if $(NCCL_HDR),1,0)
else
NCCL := 0
ifeq ($(MAKELEVEL),0)
$(info kbfs: cuda off ($(if $(CUDA_NO_GPU),nvcc found but no GPU visible: CUDA=1 builds it for GPUs elsewhere,$(if $(NVCC),CUDA=0,no nvcc))) - the GPU engine is not built)
endif
endif
ifeq ($(CUDA),1)
ifneq ($(NCCL),1)
$(info kbfs: nccl off (no nccl.h) - GPU exchanges use MPI with host staging)
endif
endif

# one job per core unless -j is given (make -j1: one at a time); not with
# clean among the goals, which would race the build
ifeq ($(MAKELEVEL)$(filter -j% clean,$(MAKEFLAGS) $(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

SAN ?= 0
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CFLAGS += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
endif

OPENMP ?= 1
ifeq ($(OPENMP),1)
CFLAGS += -fopenmp
LDFLAGS += -fopenmp
endif

# ---- sources ---------------------------------------------------------------
LIB_SRC  := $(sort $(wildcard libcommon/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=build/%.o) build/kcommit.o
CMD_SRC  := $(sort $(wildcard cmd/*.c))
PROGS    := $(CMD_SRC:cmd/%.c=bin/%)
# a program's own code (cmd/PROG/*.c beside cmd/PROG.c): linked into
# bin/PROG alone, through build/cmd/libPROG.a (the unit tests link them all)
prog_obj  = $(patsubst %.c,build/%.o,$(sort $(wildcard cmd/$(1)/*.c)))
PROG_DIRS := $(sort $(patsubst cmd/%/,%,$(dir $(wildcard cmd/*/*.c))))
PROG_OBJ := $(foreach p,$(PROG_DIRS),$(call prog_obj,$(p)))
PROG_LIBS := $(PROG_DIRS:%=build/cmd/lib%.a)
SCRIPTS  := bin/kbfs-run
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNITS    := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
# the CUDA test programs (tests/gpu/*.c), linked like bin/
GPU_TEST_SRC := $(sort $(wildcard tests/gpu/*.c))
GPU_TESTS := $(GPU_TEST_SRC:tests/gpu/%.c=build/tests/gpu/%)

# gpu/: the .cu files, or kgpu_none.c without CUDA; the other .c files in both
GPU_C_SRC := $(filter-out gpu/kgpu_none.c,$(sort $(wildcard gpu/*.c)))
ifeq ($(CUDA),1)
GPU_SRC  := $(sort $(wildcard gpu/*.cu)) $(GPU_C_SRC)
GPU_OBJ  := $(patsubst %.c,build/%.o,$(GPU_SRC:%.cu=build/%.o))
GPU_LIB  := build/libkgpu.a
CUDA_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/targets/x86_64-linux/lib))
GPU_LDLIBS := -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -lcudart $(if $(filter 1,$(NCCL)),-lnccl) -lstdc++
else
GPU_SRC  := gpu/kgpu_none.c $(GPU_C_SRC)
GPU_OBJ  := $(GPU_SRC:%.c=build/%.o)
GPU_LIB  := build/libkgpu.a
GPU_LDLIBS :=
endif

KBUILD := build/kbuild.h
FLAGS_STAMP := build/flags.stamp
FLAGS_NOW := $(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(LDLIBS) MPI=$(MPI) CUDA=$(CUDA) NCCL=$(NCCL) $(NVCC) $(NVCCFLAGS)

.PHONY: all clean test test-gpu gpu-tests cuda-check units layers demo bench install install-files deps check-deps test-deps valgrind-deps FORCE
all: $(PROGS) $(SCRIPTS)

# the scripts installed beside the programs (bin/ of the build too)
bin/%: share/%
	@mkdir -p bin
	$(Q)cp $< $@ && chmod 755 $@

# rebuild everything when the flags change
$(FLAGS_STAMP): FORCE
	@mkdir -p build
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@

# remake the archives when their lists of objects change (a file moved or
# removed: its old object would otherwise stay in the archive)
OBJS_STAMP := build/objs.stamp
OBJS_NOW := $(LIB_OBJ) $(GPU_OBJ) $(PROG_OBJ)
$(OBJS_STAMP): FORCE
	@mkdir -p build
	@echo '$(OBJS_NOW)' | cmp -s - $@ || echo '$(OBJS_NOW)' > $@

$(KBUILD): $(FLAGS_STAMP)
	@mkdir -p build
	@printf '#define KBUILD_MPI %s\n#define KBUILD_CUDA %s\n#define KBUILD_NCCL %s\n' $(MPI) $(CUDA) $(NCCL) > $@

# the commit being built (kbfs --version, the JSON record): HEAD, "-dirty"
# when tracked files differ from it; "unknown" outside a git checkout of
# its own (a tarball, even one unpacked inside another repository)
KCOMMIT := $(shell [ -e .git ] && c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
	{ git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; } && echo $$c)
build/kcommit.c: FORCE
	@mkdir -p build
	@printf 'const char kbfs_commit[] = "%s";\n' '$(or $(KCOMMIT),unknown)' | cmp -s - $@ || \
		printf 'const char kbfs_commit[] = "%s";\n' '$(or $(KCOMMIT),unknown)' > $@

build/kcommit.o: build/kcommit.c $(FLAGS_STAMP)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) -c $< -o $@

build/%.o: %.c $(FLAGS_STAMP) $(KBUILD)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  CC      $<')
	$(Q)$(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

build/%.o: %.cu $(FLAGS_STAMP) $(KBUILD)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  NVCC    $<')
	$(Q)$(NVCC) $(NVCCFLAGS) $(filter -D% -I%,$(CPPFLAGS)) $(if $(filter 1,$(MPI)),$(shell mpicc --showme:compile 2>/dev/null)) -MMD -MP -c $< -o $@

# make test without a GPU: the CUDA sources compiled all the same (objects
# in build/cuda-check, with a kbuild.h of their own that says CUDA), so a
# change that breaks them fails here and not first on a GPU machine
CUDA_CHECK_OBJ := $(if $(CUDA_NO_GPU),$(patsubst gpu/%.cu,build/cuda-check/%.o,$(wildcard gpu/*.cu)))
cuda-check: $(CUDA_CHECK_OBJ)

build/cuda-check/kbuild.h: $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@printf '#define KBUILD_MPI %s\n#define KBUILD_CUDA 1\n#define KBUILD_NCCL %s\n' $(MPI) $(if $(NCCL_HDR),1,0) > $@

build/cuda-check/%.o: gpu/%.cu build/cuda-check/kbuild.h
	@$(if $(Q),echo '  NVCC    $< (compile check: no GPU visible)')
	$(Q)$(NVCC) $(NVCCFLAGS) -Ibuild/cuda-check $(filter -D% -I%,$(CPPFLAGS)) $(if $(filter 1,$(MPI)),$(shell mpicc --showme:compile 2>/dev/null)) -MMD -MP -c $< -o $@


.SECONDEXPANSION:
build/libcommon.a: $(LIB_OBJ) $(OBJS_STAMP)
	@$(if $(Q),echo '  AR      $@')
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(GPU_LIB): $(GPU_OBJ) $(OBJS_STAMP)
	@$(if $(Q),echo '  AR      $@')
	$(Q)rm -f $@ && ar rcs $@ $(GPU_OBJ)

build/cmd/lib%.a: $$(call prog_obj,$$*) $(OBJS_STAMP)
	@$(if $(Q),echo '  AR      $@')
	$(Q)rm -f $@ && ar rcs $@ $(call prog_obj,$*)

bin/%: build/cmd/%.o $$(if $$(call prog_obj,$$*),build/cmd/lib$$*.a) build/libcommon.a $(GPU_LIB)
	@mkdir -p bin
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(filter build/cmd/lib%.a,$^) $(GPU_LIB) build/libcommon.a $(GPU_LDLIBS) $(LDLIBS)

build/tests/%: build/tests/unit/%.o $(PROG_LIBS) build/libcommon.a
	@mkdir -p build/tests
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(PROG_LIBS) build/libcommon.a $(LDLIBS)

build/tests/gpu/%: build/tests/gpu/%.o build/libcommon.a $(GPU_LIB)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(GPU_LIB) build/libcommon.a $(GPU_LDLIBS) $(LDLIBS)

build/tests/gpu/%.o: tests/gpu/%.c $(FLAGS_STAMP) $(KBUILD)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  CC      $<')
	$(Q)$(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

build/tests/unit/%.o: tests/unit/%.c $(FLAGS_STAMP) $(KBUILD)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  CC      $<')
	$(Q)$(CC) $(CSTD) $(WARN) $(CPPFLAGS) -Itests/unit -Icmd $(CFLAGS) -MMD -MP -c $< -o $@

# ---- set-up, demo, tests -----------------------------------------------------
check-deps:
	@sh share/kbfs-deps.sh

demo: check-deps
	@$(MAKE) --no-print-directory all
	@sh share/demo.sh

# VALGRIND=1: every program call of the shell tests under valgrind
# (tests/lib.sh's bin-wrappers run KBFS_EXEC); any report fails the run
VALGRIND ?= 0
VALGRIND_EXEC := valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--suppressions=$(CURDIR)/tests/san/valgrind.supp --log-file=$(CURDIR)/tests/out/valgrind/%p.log

test: test-deps $(if $(filter 1,$(VALGRIND)),valgrind-deps)
	@$(MAKE) --no-print-directory all units cuda-check
ifeq ($(VALGRIND),1)
ifeq ($(SAN),1)
	@echo "kbfs: SAN=1 and VALGRIND=1 exclude each other" >&2; exit 2
endif
	@KBFS_VALGRIND=1 KBFS_EXEC="$(VALGRIND_EXEC)" sh tests/run.sh
else
	@KBFS_SAN=$(SAN) sh tests/run.sh
endif

valgrind-deps: test-deps
	@sh share/kbfs-deps.sh valgrind

# what the tests need besides the build's packages (groff for t0031, a
# python3 that runs for the JSON and SVG checks)
test-deps: check-deps
	@sh share/kbfs-deps.sh test

test-gpu: check-deps
	@$(MAKE) --no-print-directory all units gpu-tests
	@KBFS_TEST_ONLY=gpu sh tests/run.sh

units: $(UNITS)

# libcommon's includes and objects against its layer table (libcommon/README.md)
layers: all
	@sh tests/tools/layers.sh --objects build

# the CUDA test programs; they need the CUDA engine
ifeq ($(CUDA),1)
gpu-tests: $(GPU_TESTS)
else
ifneq ($(CUDA_NO_GPU),)
gpu-tests:
	@echo "kbfs: gpu-tests not built: no GPU visible (CUDA=1 builds them)" >&2
else
gpu-tests:
	@echo "kbfs: gpu-tests need the CUDA engine (CUDA=0 or no nvcc)" >&2; exit 4
endif
endif

# ---- fuzzing (clang's libFuzzer; tests/fuzz) ----------------------------------
# make fuzz-build: every harness in build/fuzz/ (ASan + UBSan, MPI, CUDA and
# OpenMP off, zlib and the C++ runtime linked in, so the directory can be
# copied to another Linux machine and run there) and its seeds, written by
# the programs in bin/ (build/fuzz/seeds/NAME); make fuzz: each harness for
# FUZZ_SECONDS (FUZZ_JOBS at a time); share/bench/fuzz-all.sh: all at once
# on every core, with a summary of executions, crashes, timeouts and OOMs.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_JOBS    ?= 2
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := $(CSTD) -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	-D_GNU_SOURCE -I$(FUZZ_DIR) $(LIB_INC) -Igpu -Itests/fuzz -DKBFS_VERSION='"$(VERSION)"' -Wno-unknown-pragmas
FUZZ_LDLIBS  := $(or $(wildcard /usr/lib/x86_64-linux-gnu/libz.a /usr/lib64/libz.a /usr/lib/libz.a),-lz) -lm \
	-static-libstdc++ -static-libgcc
FUZZ_IMPORTS := auto edgelist mtx metis dimacs sg
FUZZERS      := kedge kpart_manifest kpart_rank kpred kio_lines run_json roots build_info $(FUZZ_IMPORTS:%=import_%)
FUZZ_BINS    := $(FUZZERS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/kcommit.o

.PHONY: fuzz fuzz-build fuzz-deps
fuzz-deps:
	@sh share/kbfs-deps.sh fuzz

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@sh tests/fuzz/seeds.sh bin $(FUZZ_DIR)/seeds

fuzz: fuzz-build
	@sh share/bench/fuzz-all.sh --bin $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) --cores $(FUZZ_JOBS) \
		--out $(FUZZ_DIR)/run --summary $(FUZZ_DIR)/run/summary.txt

$(FUZZ_DIR)/kbuild.h:
	@mkdir -p $(FUZZ_DIR)
	@printf '#define KBUILD_MPI 0\n#define KBUILD_CUDA 0\n#define KBUILD_NCCL 0\n' > $@

$(FUZZ_DIR)/obj/kcommit.o: build/kcommit.c
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_DIR)/kbuild.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  FUZZCC  $<')
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/libcommon.a: $(FUZZ_LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# (the dependency files are not made from anything: without this, make's
# built-in "%: %.o" would have the rule below build fuzz_import_X.d.o)
$(FUZZ_DIR)/obj/%.d: ;

$(FUZZ_DIR)/obj/fuzz_import_%.o: tests/fuzz/fuzz_import.c $(FUZZ_DIR)/kbuild.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  FUZZCC  $< ($*)')
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_NAME=$* \
		-DFUZZ_FORMAT=KIMPORT_$(shell echo $* | tr a-z A-Z) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/fuzz_%.o: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/kbuild.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo '  FUZZCC  $<')
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/fuzz_%.o $(FUZZ_DIR)/libcommon.a
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_DIR)/libcommon.a $(FUZZ_LDLIBS)

bench: all
	@sh share/bench/run-all.sh

install: all
	@$(MAKE) --no-print-directory install-files

# the copying alone, of what is built (the tests install this way, so an
# install never rebuilds bin/ under other flags in the middle of a run)
install-files:
	@for p in $(PROGS); do test -x $$p || { echo "kbfs: $$p is not built: run make first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(man5dir) $(DESTDIR)$(man7dir) $(DESTDIR)$(sharedir)
	install -m 755 $(PROGS) $(SCRIPTS:bin/%=share/%) $(DESTDIR)$(bindir)
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(man1dir)
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(man5dir)
	install -m 644 $(wildcard man/*.7) $(DESTDIR)$(man7dir)
	install -d $(DESTDIR)$(bashcompdir)
	for p in $(PROGS:bin/%=%); do install -m 644 share/bash-completion/kbfs $(DESTDIR)$(bashcompdir)/$$p || exit 1; done
	for p in mpirun mpiexec; do test -e $(DESTDIR)$(bashcompdir)/$$p || \
		install -m 644 share/bash-completion/kbfs $(DESTDIR)$(bashcompdir)/$$p || exit 1; done
	cp -R share/. $(DESTDIR)$(sharedir)/

clean:
	rm -rf build bin tests/out

-include $(shell find build -name '*.d' 2>/dev/null)
.SECONDARY:
