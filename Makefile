# The two commands of the README: `make demo` and `make test`. Both install missing Debian packages first.
JOBS ?= $(shell nproc)
BUILD ?= build/release
ASAN_BUILD ?= build/asan
CMAKE_FLAGS ?=

.PHONY: deps build demo test test-release test-asan check-includes clean

deps:
	@bash scripts/install_deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/pprun examples/fig1_branch.vnt --seed 1

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitized build is optimised a little (-O1, line tables only): its tests run 4x faster than at -O0, which
# keeps make test within its time. Frames are larger there (runtime/cli/eval_stack.cpp).
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
	  -DVNT_SANITIZE=address,undefined -DVNT_STAT_TESTS=OFF -DVNT_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE stat

test: test-release test-asan

# Every source file and header compiled alone, syntax only (a unit of 8 files can hide a missing #include).
# CI runs it after make test; about 4 to 5 minutes on 2 cores.
check-includes: deps
	python3 scripts/check_includes.py build/includes -- $(CMAKE_FLAGS)

clean:
	rm -rf build
