#!/usr/bin/env bash
# Installs the Debian packages kbench needs to build, test and compare against
# reference tools. Idempotent: does nothing when everything is present.
set -euo pipefail

build_packages=(
  build-essential cmake pkg-config file
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libsqlite3-dev sqlite3 libboost-dev libboost-math-dev libeigen3-dev libpq-dev zlib1g-dev
  libgtest-dev googletest
  # kbench serve's HTTP server.
  libcpp-httplib-dev
  # `make test`'s fuzz targets: clang with the libFuzzer runtime.
  clang libclang-rt-dev
  # The linker CMakeLists.txt prefers: a third of GNU ld's CPU time.
  lld
  # `make test` lints the shell kbench sends to SUTs (assets/).
  shellcheck
  # The e2e scripts read kbench's json output.
  jq
)
# Reference tools the bench/ scripts measure kbench against, and scipy for
# regenerating the statistics reference data (tests/data/*.provenance).
reference_packages=(
  linux-perf sysbench rt-tests sockperf stress-ng python3-scipy
)
# The ssh and qemu connections' tests: a loopback sshd, a VM with busybox;
# scripts/test-vm.sh's Debian VM: mmdebstrap, qemu-img (qemu-utils);
# tests/e2e/qemu_arm64.sh's arm64 VM: qemu-system-aarch64 (qemu-system-arm;
# its arm64 kernel and busybox are downloaded by scripts/fetch-test-kernel.sh
# --arch arm64, which also enables Debian multiarch arm64).
sut_test_packages=(
  openssh-server openssh-client qemu-system-x86 qemu-system-arm busybox-static cpio mmdebstrap qemu-utils
)
# The HTML pages' browser tests (tests/browser/): headless Chromium.
browser_test_packages=(chromium)
# The PostgreSQL store's tests: a throw-away server (scripts/pg-test-server.sh)
# and psql. (libpq-dev, the client library, is a build package above.)
postgres_test_packages=(postgresql)
# Kernels built from source for swprofiles with build: (docs/builds.md):
# kbuild's tools, and lld and llvm for clang builds (LLVM=1); git for the
# build key and worktrees, ccache to make rebuilds cheap.
kernel_build_packages=(make gcc git ccache flex bison bc libelf-dev libssl-dev lld llvm)
# The static aarch64 agent for arm64 SUTs (docs/arm64.md), cross-built by the
# plain build, and qemu-aarch64-static, which tests/e2e/arm64_user.sh runs it
# under.
arm64_packages=()
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  arm64_packages=(g++-aarch64-linux-gnu qemu-user-static)
fi
# With --check (make check, CI): dtc, with which tests/e2e/qemu_arm64.sh
# (a check-tier test) marks the virt board's device tree for a swprofile.
check_packages=()
if [ "${1:-}" = --check ]; then
  check_packages=(device-tree-compiler)
fi

missing=()
for pkg in "${build_packages[@]}" "${reference_packages[@]}" "${sut_test_packages[@]}" "${browser_test_packages[@]}" "${postgres_test_packages[@]}" "${kernel_build_packages[@]}" "${arm64_packages[@]}" "${check_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
# The build installs the plotting libraries the HTML pages inline (web/) and
# the browser tests' driver with npm. Checked by command, not by package: a
# nodejs from elsewhere (e.g. NodeSource) ships its own npm and conflicts with
# Debian's npm package.
if ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

# With --check (make check, CI): also LAVA's server and dispatcher for the
# lava connection's test (tests/e2e/lava.sh), installed the way
# scripts/lava-test-server.sh installs them (without recommends, keeping
# linux-perf's version). `make run` and `make test` do not need them: about
# 190 packages a kernel developer's machine is better without.
lava_missing=
if [ "${1:-}" = --check ]; then
  [ -x /usr/bin/lava-server ] && [ -x /usr/bin/lava-worker ] || lava_missing=yes
fi

if [ ${#missing[@]} -eq 0 ] && [ -z "$lava_missing" ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}${lava_missing:+ lava-server lava-dispatcher} (run as root, or install them)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ -n "$lava_missing" ]; then
  "$(dirname "$0")/lava-test-server.sh" install
fi
