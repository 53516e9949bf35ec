#!/usr/bin/env bash
# Runs a command (ctest) with what the tests need around it:
#   KBENCH_TEST_POSTGRES  a throw-away PostgreSQL server (scripts/pg-test-server.sh),
#                         unless one is named already; stopped and removed at exit
#   KBENCH_TEST_KERNEL    a stock Debian kernel for the QEMU tests
#                         (scripts/fetch-test-kernel.sh, cached outside the clone)
# Usage: scripts/with-test-env.sh COMMAND [ARG...]
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)

if [ -z "${KBENCH_TEST_POSTGRES:-}" ]; then
  eval "$("$scripts/pg-test-server.sh" start)"
  trap '"$scripts/pg-test-server.sh" stop' EXIT
fi
if [ -z "${KBENCH_TEST_KERNEL:-}" ]; then
  KBENCH_TEST_KERNEL=$("$scripts/fetch-test-kernel.sh")
  export KBENCH_TEST_KERNEL
fi
echo "with-test-env: PostgreSQL $KBENCH_TEST_POSTGRES, test kernel $KBENCH_TEST_KERNEL"
status=0
"$@" || status=$?
exit "$status"
