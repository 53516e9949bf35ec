# The README's commands. Each installs missing Debian packages first.
#   make run    measure this machine's kernel into the SQLite store, print the table
#   make test   what a contributor runs before a commit: ctest -LE check
#   make check  everything (CI, .ci/run): every test, the ASan+UBSan build, the fuzzers
# Which tier a test is in: tests/CMakeLists.txt, label `check`.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc)
SWPROFILE  ?= $(shell uname -r)
SUITE      ?= quick
# Seconds each libFuzzer target runs in `make test`.
FUZZ_SECONDS ?= 30
# CMake's unity build: each library compiles its sources in batches of eight,
# so the headers they all include (json, fmt, yaml-cpp, Boost) are parsed and
# their templates compiled once per batch instead of once per file (with the
# tests' shared precompiled header, the ASan build from scratch took 1062 CPU
# seconds instead of 1381). UNITY=OFF for one file per compile.
UNITY      ?= ON
CMAKE_ARGS := -DCMAKE_UNITY_BUILD=$(UNITY)
# The compiler cache, when there is one (install-deps.sh installs ccache): a
# rebuild compiles only what changed. (A clone at another path misses with
# UNITY=ON: the unity sources name each file by its absolute path.)
# Decided when the recipe runs, not when make reads this file, so that the
# first `make` on a fresh machine (which installs ccache) uses it too.
# CCACHE_BASEDIR turns this clone's absolute paths into relative ones in what
# ccache hashes; the tests' precompiled header needs the sloppiness.
LAUNCHER    = $$(command -v ccache >/dev/null && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: all deps deps-check build run test check build-asan test-asan build-fuzz test-fuzz clean

all: build

deps:
	@scripts/install-deps.sh

# make check's extra packages too (LAVA, for the lava connection's test).
deps-check:
	@scripts/install-deps.sh --check

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) $(LAUNCHER) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)
	@date +'make: %T build done'

# The main job: measure this machine's running kernel into the default SQLite
# store and print the single-profile table.
run: build
	$(BUILD)/kbench run --swprofile "$(SWPROFILE)" --suite $(SUITE)

# Before a commit: every test not labelled `check` (unit tests, end-to-end
# scripts, browser tests, one QEMU boot with a comparison), in parallel
# (tests/CMakeLists.txt gives each a COST so the longest start first).
# scripts/with-test-env.sh starts a throw-away PostgreSQL server unless
# KBENCH_TEST_POSTGRES names one, and fetches the test kernel.
test: build
	@scripts/with-test-env.sh ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS) -LE check
	@date +'make: %T test done'

# Everything, the CI command: all of build/'s tests (the `check` ones too:
# every VM boot, arm64, kfunc, kernel deployment by kexec and by reboot), and
# beside them the sanitizer and fuzz builds and their runs. Fails if any part
# failed, after running all of them. The sanitizer and fuzz trees compile and
# run at nice 19 while build/'s tests run: those leave CPU time idle (ssh
# waits, sleeps, VM start-ups, and one core for the last ten minutes, when
# only the kexec deployment test is left) that they take, and at nice 19 they
# yield whenever a test wants the CPU. Their build output goes to
# $(BUILD_ASAN).log, their tests' to $(BUILD_ASAN)-checks.log, printed at the
# end.
check: deps-check build
	@( nice -n 19 $(MAKE) --no-print-directory --keep-going build-asan build-fuzz >$(BUILD_ASAN).log 2>&1; 	   nice -n 19 $(MAKE) --no-print-directory --keep-going test-asan test-fuzz >$(BUILD_ASAN)-checks.log 2>&1 ) & 	checks_job=$$!; 	scripts/with-test-env.sh ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS); tests=$$?; 	date +'make: %T tests done'; 	wait $$checks_job; checks=$$?; 	cat $(BUILD_ASAN)-checks.log; 	date +"make: %T check done: tests $$tests, sanitizer and fuzz checks $$checks (0 = passed)"; 	[ $$tests -eq 0 ] && [ $$checks -eq 0 ]

# The unit tests built with ASan+UBSan (-O0 and line tables: what ASan needs
# for its reports; -O0 builds in 631 CPU seconds where -O1 took 1062, and
# the tests then run in 69 s instead of 37 s), each GoogleTest program once
# over all its cases; not the end-to-end scripts (nor the LAVA test server
# some of them need), which the plain build runs.
# Which cases the sanitizer build leaves out (the VM boots, the PostgreSQL
# store's, the static-link check), and why: tests/CMakeLists.txt.
build-asan: deps
	@cmake -S . -B $(BUILD_ASAN) $(CMAKE_ARGS) $(LAUNCHER) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" >/dev/null
	@cmake --build $(BUILD_ASAN) -j$(JOBS)

test-asan: build-asan
	cd $(BUILD_ASAN) && env -u KBENCH_TEST_KERNEL \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(JOBS) -E '^e2e_|^lava_test_server_'
	@date +'make: %T test-asan done'

# Each libFuzzer target for FUZZ_SECONDS; a crash fails.
build-fuzz: deps
	@cmake -S . -B $(BUILD_FUZZ) $(CMAKE_ARGS) $(LAUNCHER) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_FUZZ=ON >/dev/null
	@cmake --build $(BUILD_FUZZ) -j$(JOBS) --target fuzz_targets

test-fuzz: build-fuzz
	@scripts/run-fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)
	@date +'make: %T test-fuzz done'

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_ASAN).log $(BUILD_ASAN)-checks.log
