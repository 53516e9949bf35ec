#!/usr/bin/env bash
# Plans that ask for kernels on SUTs that cannot take them, or name kernel
# files that are not there: one line, exit 2, nothing measured. Then a real
# loopback sshd as the SUT: kbench probes it for deployment and refuses an
# installed kernel the SUT does not have, before any boot.
source "$(dirname "$0")/lib.bash"

store="sqlite://$WORK/deploy.db"
cat >"$WORK/no-boot.yaml" <<'YAML'
sut: {name: lab, connection: {method: ssh, params: {host: lab-1}}}
swprofiles:
  - {name: a, kernel: {deb: a.deb}}
benchmarks: [syscall/getppid]
YAML
expect_bad_input "a kernel on an ssh SUT without sut.boot" "$KBENCH" plan exec "$WORK/no-boot.yaml" --store "$store"
expect_contains "$WORK/err" "names a kernel; an ssh SUT installs and boots it only with sut.boot"

cat >"$WORK/sysctl-no-boot.yaml" <<'YAML'
sut: {name: lab, connection: {method: ssh, params: {host: lab-1}}}
swprofiles:
  - {name: a, sysctl: {kernel.sched_autogroup_enabled: "0"}}
benchmarks: [syscall/getppid]
YAML
expect_bad_input "sysctls on an ssh SUT without sut.boot" "$KBENCH" plan check "$WORK/sysctl-no-boot.yaml"
expect_contains "$WORK/err" "sysctl settings on an ssh SUT need sut.boot"

cat >"$WORK/missing-deb.yaml" <<YAML
sut:
  name: lab
  connection: {method: ssh, params: {host: lab-1}}
  boot: {method: kexec}
swprofiles:
  - {name: a, kernel: {deb: $WORK/nonexistent.deb}}
benchmarks: [syscall/getppid]
YAML
expect_bad_input "a kernel file that is not there" "$KBENCH" plan exec "$WORK/missing-deb.yaml" --store "$store"
expect_contains "$WORK/err" "swprofile a: kernel file $WORK/nonexistent.deb: expected a readable file"

cat >"$WORK/boot-qemu.yaml" <<'YAML'
sut: {name: lab, connection: {method: qemu}, boot: {method: kexec}}
benchmarks: [syscall/getppid]
YAML
expect_bad_input "sut.boot on a qemu SUT" "$KBENCH" plan check "$WORK/boot-qemu.yaml"
expect_contains "$WORK/err" "sut.boot: expected sut.connection.method local or ssh"
# This machine boots too, but a plan in /tmp would be gone after the boot
# (refused on any machine; the rest: tests/e2e/deploy_local.sh).
cat >"$WORK/boot-local.yaml" <<'YAML'
sut: {name: lab, connection: {method: local}, boot: {method: kexec}}
swprofiles: [{name: a, kernel: {release: 6.1.0-1-amd64}}]
benchmarks: [syscall/getppid]
YAML
expect_bad_input "sut.boot on this machine, the plan in /tmp" "$KBENCH" plan exec "$WORK/boot-local.yaml" --store "$WORK/deploy.db"
expect_contains "$WORK/err" "which a boot empties"
[ ! -e "$WORK/deploy.db" ] && pass || fail "a refused plan created the store"

# A real SUT over ssh.
env_file=$(bash "$KBENCH_SOURCE_DIR/scripts/start-test-sshd.sh" "$WORK/sshd") || {
  status=$?; [ $status -eq 77 ] && skip "no sshd"; fail "start-test-sshd failed"; finish; exit; }
source "$env_file"
trap 'kill "$SSHD_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
cat >"$WORK/installed.yaml" <<YAML
sut:
  name: loopback
  connection: {method: ssh, params: {host: 127.0.0.1, port: "$SSHD_PORT", user: $SSH_USER, keyfile: $SSH_KEY, known_hosts: $SSH_KNOWN_HOSTS}}
  boot: {method: kexec, timeout: 30s}
swprofiles:
  - {name: ghost, kernel: {release: 0.0.0-kbench-none}}
benchmarks: [syscall/getppid]
YAML
if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  "$KBENCH" plan exec "$WORK/installed.yaml" --store "$store" >"$WORK/out" 2>"$WORK/err"
  [ $? -eq 1 ] && pass || fail "a non-root SUT user without sudo: expected exit 1"
  expect_contains "$WORK/err" "kbench needs root on the SUT to install kernels"
elif ! command -v kexec >/dev/null; then
  # This machine as the SUT lacks kexec-tools: the probe says so.
  "$KBENCH" plan exec "$WORK/installed.yaml" --store "$store" >"$WORK/out" 2>"$WORK/err"
  [ $? -eq 1 ] && pass || fail "a SUT without kexec: expected exit 1, got $(cat "$WORK/err")"
  expect_contains "$WORK/err" "sut.boot.method kexec needs kexec on the SUT, which it lacks (Debian: apt-get install kexec-tools)"
else
  expect_bad_input "an installed release the SUT lacks" "$KBENCH" plan exec "$WORK/installed.yaml" --store "$store"
  expect_contains "$WORK/err" "swprofile ghost: kernel.release 0.0.0-kbench-none: the SUT has no /boot/vmlinuz-0.0.0-kbench-none"
fi
cat "$WORK/err"
sessions=$(sqlite3 "$WORK/deploy.db" "select count(*) from session" 2>/dev/null || echo 0)
[ "$sessions" -eq 0 ] && pass || fail "a refused deployment stored $sessions session(s)"
finish
