# The two set-up commands: `make run` and `make test`. Both install what is missing first.
JOBS ?= $(shell nproc)
POLYGRAD := build/release/bin/polygrad

.PHONY: run test deps build build-asan test-release test-asan test-python bench format clean

run: build
	$(POLYGRAD) devices
	build/release/bin/polygrad-demo
	frontends/python/run_example.sh build/release

test: build build-asan test-release test-asan test-python

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

test-python: build
	frontends/python/run_tests.sh build/release

bench: build
	build/release/bin/bench_compile_latency
	build/release/bin/bench_ir
	build/release/bin/bench_realize
	OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 \
	  /usr/bin/python3 bench/compare.py build/release/bin/bench_ops

format:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf build
