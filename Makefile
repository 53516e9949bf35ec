# The two commands of the README. Both install missing Debian packages first.
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

.PHONY: all deps build run test test-asan test-fuzz clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)
	@date +'make: %T build done'

# The main job: measure this machine's running kernel into the default SQLite
# store and print the single-profile table.
run: build
	$(BUILD)/kbench run --swprofile "$(SWPROFILE)" --suite $(SUITE)

# Everything. The tests labelled vm boot kernels under QEMU's TCG: about 30
# minutes that keep one core busy and are the longest part, so they start
# first, in the background, as soon as the programs they run are built (kbench,
# its agents, sut_qemu_test); the rest of the build, the sanitizer and fuzz
# builds and checks, and the rest of the suite run beside them, and the VM
# tests' log and summary come last. Fails if any part failed.
# The PostgreSQL store's tests need a server: without KBENCH_TEST_POSTGRES a
# throw-away one (scripts/pg-test-server.sh) serves this run and is removed.
test: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	@aarch64_agent=$$(cmake --build $(BUILD) --target help | grep -o 'kbench-agent-aarch64$$' | head -n 1); \
	cmake --build $(BUILD) -j$(JOBS) --target kbench sut_qemu_test $$aarch64_agent
	@if [ -z "$$KBENCH_TEST_POSTGRES" ]; then \
	  eval "$$(scripts/pg-test-server.sh start)" || exit 1; \
	  trap 'scripts/pg-test-server.sh stop' EXIT; \
	fi; \
	kernel=$$(scripts/fetch-test-kernel.sh) && echo "test kernel: $$kernel" && \
	export KBENCH_TEST_KERNEL=$$kernel && \
	{ (cd $(BUILD) && ctest --output-on-failure -L vm >vm-tests.log 2>&1); echo $$? >$(BUILD)/vm-tests.status; } & \
	echo "make: $$(date +%T) VM tests started in the background (log $(BUILD)/vm-tests.log)"; \
	cmake --build $(BUILD) -j$(JOBS); built=$$?; date +'make: %T build done'; \
	$(MAKE) --no-print-directory --keep-going test-asan test-fuzz; checks=$$?; \
	(cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -LE vm); rest=$$?; \
	date +'make: %T waiting for the VM tests'; wait; \
	cat $(BUILD)/vm-tests.log; vms=$$(cat $(BUILD)/vm-tests.status); \
	date +"make: %T test done: build $$built, sanitizer and fuzz checks $$checks, tests $$rest, VM tests $$vms (0 = passed)"; \
	[ $$built -eq 0 ] && [ $$checks -eq 0 ] && [ $$rest -eq 0 ] && [ $$vms -eq 0 ]

# The unit tests built with ASan+UBSan (-O0 and line tables: what ASan needs
# for its reports; -O0 builds in 631 CPU seconds where -O1 took 1062, and
# the tests then run in 69 s instead of 37 s); not the end-to-end scripts nor the
# VM boots, which the plain build runs; nor the PostgreSQL store's tests,
# which need a server (the plain build runs them with the one `make test`
# starts; `make test-asan` alone has none). The agent is dynamic here (ASan's
# runtime cannot be linked statically), so the static-link check is left to
# the plain build.
test-asan: deps
	@cmake -S . -B $(BUILD_ASAN) $(CMAKE_ARGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" >/dev/null
	@cmake --build $(BUILD_ASAN) -j$(JOBS)
	cd $(BUILD_ASAN) && env -u KBENCH_TEST_KERNEL \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(JOBS) -E '^e2e_|^Qemu(Boot|Session)\.|^Agent\.IsStaticallyLinked$$|^Postgres|/StoreContract\..*/postgresql'
	@date +'make: %T test-asan done'

# Each libFuzzer target for FUZZ_SECONDS; a crash fails.
test-fuzz: deps
	@cmake -S . -B $(BUILD_FUZZ) $(CMAKE_ARGS) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_FUZZ=ON >/dev/null
	@cmake --build $(BUILD_FUZZ) -j$(JOBS) --target fuzz_targets
	@scripts/run-fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)
	@date +'make: %T test-fuzz done'

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
