# The two commands of the README. Both install missing Debian packages first.
BUILD     ?= build
JOBS      ?= $(shell nproc)
SWPROFILE ?= $(shell uname -r)
SUITE     ?= quick

.PHONY: all deps build run test clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job: measure this machine's running kernel into the default SQLite
# store and print the single-profile table.
run: build
	$(BUILD)/kbench run --swprofile "$(SWPROFILE)" --suite $(SUITE)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

clean:
	rm -rf $(BUILD)
