# The two set-up commands: `make run` and `make test`. Both install what is missing first.
JOBS ?= $(shell nproc)
POLYGRAD := build/release/bin/polygrad

.PHONY: run test deps build build-asan test-release test-asan test-python test-python-emu \
	test-python-wasm test-r \
	check-r bench format clean

run: build
	$(POLYGRAD) devices
	build/release/bin/polygrad-demo
	frontends/python/run_example.sh build/release
	frontends/r/run_example.sh build/release

test: build build-asan test-release test-asan test-python test-python-emu test-python-wasm test-r

deps:
	@scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-asan: deps
	@cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)

test-release: build
	ctest --preset release -j $(JOBS)

test-asan: build-asan
	ctest --preset asan -j $(JOBS)

# Where the wasm plugin is built (wabt is there), every kernel of the run is also rendered to a
# WebAssembly module (POLYGRAD_CROSS_COMPILE, docs/compiler.md) and each module is validated with
# wabt's wasm-validate: the wasm plugin's renderer tier, on the kernels of the whole suite.
WASM_PLUGIN := build/release/lib/polygrad/plugins/polygrad_wasm.so
WASM_MODULES := $(CURDIR)/build/release/wasm_modules
test-python: build
	rm -rf $(WASM_MODULES)
	if [ -f $(WASM_PLUGIN) ] && command -v wasm-validate >/dev/null; then \
	  POLYGRAD_CROSS_COMPILE=wasm POLYGRAD_CROSS_COMPILE_DIR=$(WASM_MODULES) \
	    frontends/python/run_tests.sh build/release && \
	  tests/cross_compile/validate_wasm.sh $(WASM_MODULES); \
	else \
	  frontends/python/run_tests.sh build/release; \
	fi

# The Python suite again on the GPU-semantics emulator (plugins/gpu_emulator) as the default device:
# the codegen's group path (groups, local memory, barriers, tensor cores) where there is no GPU.
#
# Where the cuda plugin is built (the CUDA toolkit is there), every kernel of that run is also
# compiled for sm_90 (POLYGRAD_CROSS_COMPILE, docs/compiler.md): a register spill is a compile
# error, and tests/cross_compile/check_cubins.py checks each cubin is one, for sm_90, with its
# kernel. This is the cuda plugin's compile-only tier; no GPU is needed.
CUDA_PLUGIN := build/release/lib/polygrad/plugins/polygrad_cuda.so
CUBINS := $(CURDIR)/build/release/cubins
test-python-emu: build
	rm -rf $(CUBINS)
	if [ -f $(CUDA_PLUGIN) ]; then \
	  POLYGRAD_DEVICE=emu POLYGRAD_CROSS_COMPILE=cuda:sm_90 POLYGRAD_CROSS_COMPILE_DIR=$(CUBINS) \
	    POLYGRAD_CUDA_SPILLS=error frontends/python/run_tests.sh build/release && \
	  /usr/bin/python3 tests/cross_compile/check_cubins.py $(CUBINS) --arch sm_90 --stack-ok; \
	else \
	  POLYGRAD_DEVICE=emu frontends/python/run_tests.sh build/release; \
	fi

# The Python suite again on the wasm device (plugins/wasm) on its v8 engine: every kernel of the
# suite rendered to WebAssembly and run by V8 (the device must say "v8 engine": a build that
# fell back to interp fails here). Cases on float16 and bfloat16, which the device lacks, skip;
# frontends/python/tests/conftest.py lists the known wasm bugs (strict xfails). Where no wasm
# plugin is built (no wabt), nothing runs.
test-python-wasm: build
	if [ -f $(WASM_PLUGIN) ]; then \
	  $(POLYGRAD) devices | grep -q 'WebAssembly (v8 engine)' || \
	    { echo "test-python-wasm: wasm:0 is not on the v8 engine:"; $(POLYGRAD) devices; exit 1; }; \
	  POLYGRAD_DEVICE=wasm frontends/python/run_tests.sh build/release; \
	else \
	  echo "test-python-wasm: no wasm plugin built (no wabt), skipped"; \
	fi

# The R package, installed into build/release/Rlib and tested; with test-python's venv there, a
# test also checks that Python reads the files R writes.
test-r: build
	frontends/r/run_tests.sh build/release

# R CMD check --no-manual of the R package (fails on an ERROR or a WARNING).
check-r: build
	frontends/r/check.sh build/release

# OpenBLAS's SkylakeX kernels are the fastest torch and numpy have on an AVX-512 host; forcing
# them on a host without AVX-512 (an AMD EPYC Milan) kills the run with SIGILL, so there
# OpenBLAS picks its own kernels.
BLAS_CORE = $(if $(shell grep -qw avx512f /proc/cpuinfo && echo y),OPENBLAS_CORETYPE=SkylakeX)

bench: build
	build/release/bin/bench_compile_latency
	build/release/bin/bench_ir
	build/release/bin/bench_realize
	$(BLAS_CORE) OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 \
	  /usr/bin/python3 bench/compare.py build/release/bin/bench_ops
	repo=$(CURDIR) build=$(CURDIR)/build/release bash -c 'source frontends/python/install_venv.sh'
	$(BLAS_CORE) OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 \
	  build/release/venv/bin/python bench/models.py
	$(BLAS_CORE) OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 PYTHONPATH=frontends/python \
	  POLYGRAD_LIB=$(CURDIR)/build/release/lib/libpolygrad.so \
	  build/release/venv/bin/python bench/first_call.py
	$(BLAS_CORE) OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 PYTHONPATH=frontends/python \
	  POLYGRAD_LIB=$(CURDIR)/build/release/lib/libpolygrad.so \
	  build/release/venv/bin/python bench/gpt2.py

format:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf build
