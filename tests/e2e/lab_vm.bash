# The QEMU VM of scripts/test-vm.sh (Debian 12 with sshd, systemd and
# kexec-tools; the image cached between runs, each test on a throwaway
# overlay of it) as a lab machine: what the deploy e2e scripts share.
# Sourced after lib.bash.
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (Debian package qemu-system-x86)"
[ "$(id -u)" -eq 0 ] || skip "building the VM image needs root (mmdebstrap, mkfs.ext4 -d)"
vm_script="$KBENCH_SOURCE_DIR/scripts/test-vm.sh"

deb_release() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed -n 's|^\./boot/vmlinuz-||p' | head -n 1; }

# Builds or finds the image and its two Debian kernel packages. Sets cache,
# debs, release_a and release_b (the packages' releases), default_release
# (the image's own kernel); `started` is the script's start.
lab_vm_image() {
  cache=$("$vm_script" build) || { fail "test-vm.sh build failed"; finish; exit; }
  mapfile -t debs < <("$vm_script" kernels "$cache")
  [ "${#debs[@]}" -eq 2 ] || { fail "test-vm.sh kernels gave ${#debs[@]} packages, expected 2"; finish; exit; }
  release_a=$(deb_release "${debs[0]}")
  release_b=$(deb_release "${debs[1]}")
  default_release=$(cat "$cache/release")
  echo "VM default kernel $default_release; a = $release_a, b = $release_b (image ready after $(( $(date +%s) - started ))s)"
}

# lab_vm_start [kernel|grub]: starts the VM in $WORK/vm (stopped at exit)
# and waits for its ssh. Sets vm; vm_ssh runs a command in it.
lab_vm_start() {
  vm=$WORK/vm
  trap '"$vm_script" stop "$vm" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
  KBENCH_TEST_VM_BOOT=${1:-kernel} "$vm_script" start "$vm" "$cache" ||
    { fail "test-vm.sh start (${1:-kernel}) failed"; finish; exit; }
  local first_boot
  first_boot=$("$vm_script" wait "$vm" 600) || { fail "the VM did not come up (${1:-kernel})"; finish; exit; }
  echo "VM up (${1:-kernel}): ssh ready after ${first_boot}s"
}
vm_ssh() { ssh -F "$vm/ssh_config" vm "$@"; }

# lab_vm_sut_yaml NAME METHOD TIMEOUT: a plan's sut: the started VM over ssh,
# booting by METHOD (kexec | reboot), power-cycled by test-vm.sh reset.
lab_vm_sut_yaml() {
  cat <<YAML
sut:
  name: $1
  connection:
    method: ssh
    params: {host: 127.0.0.1, port: "$(cat "$vm/ssh_port")", user: root, keyfile: $cache/id_ed25519,
             known_hosts: $vm/known_hosts, strict_host_key_checking: accept-new}
  boot: {method: $2, timeout: $3, power_cycle: "$vm_script reset $vm", console_log: $vm/console.log}
YAML
}

# check_alternated_boots STORE_FILE ORDER [BACK]: a plan of swprofiles a, b
# and panics (a kernel that panics), booted by kexec: the boots went as ORDER
# (e.g. "a:1 b:1 panics:0 b:1 a:1", 0 for the failed boot), then BACK (by
# default the boot back into the SUT's own kernel; "" for none); each
# session of a and b (as many as a's boots in ORDER) ran its kernel and
# records its kexec boot; panics stored no session.
check_alternated_boots() {
  local own_kernel=" (the SUT's own kernel):1"
  local store_file=$1 expected="$2${3-$own_kernel}" order profile want got boots panics sessions
  sessions=$(tr ' ' '\n' <<<"$2" | grep -cx 'a:1')
  order=$(sqlite3 "$store_file" "select group_concat(swprofile || ':' || ok, ' ') from (select * from boot order by id)")
  [ "$order" = "$expected" ] && pass ||
    fail "boots were '$order', expected '$expected'"
  for profile in a b; do
    want=$release_a; [ $profile = b ] && want=$release_b
    got=$(sqlite3 "$store_file" "select group_concat(distinct s.kernel_release) from session s join swprofile w on w.id = s.swprofile_id where w.name = '$profile'")
    [ "$got" = "$want" ] && pass || fail "sessions of $profile ran kernel '$got', expected $want"
    boots=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = '$profile' and s.finished_at is not null and json_extract(s.fingerprint, '\$.boot.ok') = 1 and json_extract(s.fingerprint, '\$.boot.method') = 'kexec'")
    [ "$boots" -eq "$sessions" ] && pass || fail "$profile: $boots finished sessions record their kexec boot, expected $sessions"
  done
  panics=$(sqlite3 "$store_file" "select count(*) from session s join swprofile w on w.id = s.swprofile_id where w.name = 'panics'")
  [ "$panics" -eq 0 ] && pass || fail "the failed boot stored $panics session(s) under swprofile panics"
}
