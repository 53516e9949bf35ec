#!/usr/bin/env bash
# A throw-away LAVA server for the tests of the `lava` SUT connection:
# lava-server (gunicorn, lava-publisher, lava-scheduler) and lava-worker on
# this machine, one worker and two devices, its database in a PostgreSQL
# cluster of its own under the state directory:
# - a `qemu` device (x86_64, TCG: no KVM), which LAVA boots with QEMU itself;
# - a board that boots as a lab's arm64 boards do: Debian's U-Boot as its
#   firmware, on a serial console LAVA reaches by telnet, its kernel, ramdisk
#   and device tree fetched by TFTP from LAVA's TFTP directory, its power
#   switched by commands. The board is a qemu-system-aarch64 virt machine
#   (TCG) that this script starts paused and keeps for the server's life;
#   "power on" resets and resumes it, "power off" pauses it. Its device type,
#   kbench-uboot-qemu, is LAVA's base-uboot with the board's addresses. No systemd: the
# processes are started here, each in a session of its own, and their pids
# kept in the state directory. Needs root (apt-get, the dispatcher).
#
#   eval "$(scripts/lava-test-server.sh start)"   prints `export` lines:
#       KBENCH_TEST_LAVA_URL=http://127.0.0.1:PORT/   (REST API under api/v0.2/)
#       KBENCH_TEST_LAVA_TOKEN_FILE=DIR/token        (0600, an API token of the
#                                                     superuser `kbench`)
#       KBENCH_TEST_LAVA_DEVICE_TYPE=qemu, KBENCH_TEST_LAVA_DEVICE=NAME,
#       KBENCH_TEST_LAVA_BOARD_TYPE=kbench-uboot-qemu,
#       KBENCH_TEST_LAVA_BOARD=NAME, KBENCH_TEST_LAVA_BOARD_DTB=FILE (the
#       board's device tree), KBENCH_TEST_LAVA_DIR=DIR
#   scripts/lava-test-server.sh status   exit 0 and the export lines when it
#                                        answers, else exit 1
#   scripts/lava-test-server.sh stop     stops every process `start` started
#                                        and removes the state directory
#   scripts/lava-test-server.sh install  installs the packages only
#
# `start` installs lava-server and lava-dispatcher (Debian packages,
# --no-install-recommends) when missing. While a server started here answers,
# `start` prints its lines again and starts nothing; a state directory whose
# server does not answer (a crash, a reboot) is cleared and built again.
# The state directory is $KBENCH_LAVA_TEST_STATE, default
# /var/tmp/kbench-lava-test.
#
# The database as `start` leaves it before any process starts (migrated,
# the superuser, its token, the worker, the device) is kept in a cache,
# $KBENCH_LAVA_TEST_CACHE (default /var/cache/kbench-lava-test), under a key
# made of this script's text, the LAVA, Django and PostgreSQL versions: the
# next `start` copies it instead of running Django's migrations and seven
# `lava-server manage` commands (most of a start's time). Another version
# of any of them, or an edit of this script, builds it again. Run it under `nice -n 19` to have the server, the
# dispatcher and the QEMU guests it boots yield to other work (nice is
# inherited).
#
# LAVA's settings come from the environment (LAVA_SETTINGS_*,
# LAVA_YAML_SETTINGS_*, read after /etc/lava-server/settings.d), so nothing
# under /etc is written and a LAVA configured on this machine is not used:
# the database, the device dictionaries, job output and logs all live in the
# state directory.
set -euo pipefail

state=${KBENCH_LAVA_TEST_STATE:-/var/tmp/kbench-lava-test}
worker_name=kbench-test-worker
device=kbench-qemu-01
board=kbench-uboot-01
board_type=kbench-uboot-qemu
admin=kbench
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
cache_root=${KBENCH_LAVA_TEST_CACHE:-/var/cache/kbench-lava-test}
uboot_firmware=/usr/lib/u-boot/qemu_arm64/u-boot.bin

die() { echo "lava-test-server: $*" >&2; exit 1; }

print_exports() {
  echo "export KBENCH_TEST_LAVA_URL=$(cat "$state/url")"
  echo "export KBENCH_TEST_LAVA_TOKEN_FILE=$state/token"
  echo "export KBENCH_TEST_LAVA_DEVICE_TYPE=qemu"
  echo "export KBENCH_TEST_LAVA_DEVICE=$device"
  echo "export KBENCH_TEST_LAVA_BOARD_TYPE=$board_type"
  echo "export KBENCH_TEST_LAVA_BOARD=$board"
  echo "export KBENCH_TEST_LAVA_BOARD_DTB=$state/board/board.dtb"
  echo "export KBENCH_TEST_LAVA_DIR=$state"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# GET on the REST API; prints the body, fails on an HTTP error.
api() {
  curl -fsS --max-time 10 -H "Authorization: Token $(cat "$state/token")" "$(cat "$state/url")api/v0.2/$1"
}

# Both devices Idle and Good (or Unknown) and the worker Online: what a job
# needs to start. A job that ends on an infrastructure error (QEMU refusing a
# kernel) leaves the device's health Unknown, which the scheduler still
# schedules on; with no health checks it stays so until a job completes.
ready() {
  [ -f "$state/url" ] && [ -f "$state/token" ] || return 1
  local dev brd wrk
  dev=$(api "devices/$device/" 2>/dev/null) || return 1
  brd=$(api "devices/$board/" 2>/dev/null) || return 1
  wrk=$(api "workers/$worker_name/" 2>/dev/null) || return 1
  python3 - "$dev" "$brd" "$wrk" <<'EOF'
import json, sys
*devs, wrk = (json.loads(arg) for arg in sys.argv[1:])
sys.exit(0 if all(d["state"] == "Idle" and d["health"] in ("Good", "Unknown") for d in devs)
         and wrk["state"] == "Online" else 1)
EOF
}

# The server answers with its worker Online: a server already started,
# whose devices may be running other tests' jobs.
answering() {
  [ -f "$state/url" ] && [ -f "$state/token" ] || return 1
  api "workers/$worker_name/" 2>/dev/null | grep -q '"state":"Online"'
}

alive() {
  local f=$state/pids/$1.pid
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

all_alive() {
  alive gunicorn && alive publisher && alive scheduler && alive worker && alive board
}

install_packages() {
  local missing=()
  [ -x /usr/bin/lava-server ] || missing+=(lava-server)
  [ -x /usr/bin/lava-worker ] || missing+=(lava-dispatcher)
  # Of lava-dispatcher's recommends only QEMU is used (the device type).
  command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
  command -v gunicorn >/dev/null || missing+=(gunicorn)
  # The board: its machine and firmware, its console's client, mkimage (which
  # LAVA looks for on a device whose deploy adds U-Boot headers) and
  # tftpd-hpa, whose /etc/default/tftpd-hpa is where LAVA's dispatcher reads
  # its TFTP directory from (the board itself is served by QEMU's TFTP).
  command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
  [ -f "$uboot_firmware" ] || missing+=(u-boot-qemu)
  command -v mkimage >/dev/null || missing+=(u-boot-tools)
  command -v telnet >/dev/null || missing+=(telnet)
  [ -f /etc/default/tftpd-hpa ] || missing+=(tftpd-hpa)
  [ "${#missing[@]}" -eq 0 ] && return 0
  # lava-dispatcher-host pulls in kernel headers whose newer version would
  # upgrade linux-perf and linux-libc-dev with them; benchmarks and builds on
  # this machine use those, so they keep the version they have.
  local keep=() p v
  for p in linux-perf linux-libc-dev; do
    v=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p" 2>/dev/null || true)
    case "$v" in "ii "*) keep+=("$p=${v#ii  }") ;; esac
  done
  echo "lava-test-server: installing ${missing[*]} (log in $state.apt.log)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}" "${keep[@]}" >"$state.apt.log" 2>&1 \
    || { tail -20 "$state.apt.log" >&2; die "apt-get install ${missing[*]} failed (log in $state.apt.log)"; }
}

# Starts a long-running process in a session of its own (so that `stop` can
# signal its whole process group: gunicorn's workers, lava-run, QEMU), output
# in log/NAME.log, pid in pids/NAME.pid. The lock's descriptor is closed or
# the process would hold the lock for its whole life.
spawn() {
  local name=$1
  shift
  (
    set -a
    # shellcheck disable=SC1091
    . "$state/env"
    exec setsid "$@" </dev/null >"$state/log/$name.log" 2>&1 9>&-
  ) &
  echo "$!" >"$state/pids/$name.pid"
}

manage() {
  (
    set -a
    # shellcheck disable=SC1091
    . "$state/env"
    exec lava-server manage "$@" 9>&-
  )
}

# A new cluster in pg/data, owned by postgres.
init_cluster() {
  [ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] || die "no PostgreSQL server in /usr/lib/postgresql/*/bin (Debian package postgresql)"
  id postgres >/dev/null 2>&1 || die "no user postgres (Debian package postgresql)"
  mkdir -p "$state/pg"
  chown postgres: "$state/pg"
  runuser -u postgres -- "$pgbin/initdb" -D "$state/pg/data" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 --no-instructions -E UTF8 --locale=C.UTF-8 >"$state/log/initdb.log" 2>&1 \
    || { cat "$state/log/initdb.log" >&2; die "initdb failed"; }
}

# Starts the cluster of pg/data on a free port (pg/port).
run_cluster() {
  local port attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    # fsync off: a throw-away database need not survive a power cut.
    if runuser -u postgres -- "$pgbin/pg_ctl" -D "$state/pg/data" -l "$state/pg/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $state/pg -c fsync=off" start >/dev/null 2>&1 9>&-; then
      break
    fi
    [ "$attempt" -eq 5 ] && { tail -20 "$state/pg/server.log" >&2; die "PostgreSQL did not start"; }
  done
  echo "$port" >"$state/pg/port"
}

stop_cluster() {
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$state/pg/data" -m fast -w stop >/dev/null 2>&1
}

create_database() {
  local password
  password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  runuser -u postgres -- "$pgbin/psql" -q -h "$state/pg" -p "$(cat "$state/pg/port")" -U postgres -d postgres \
    -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE lavaserver LOGIN PASSWORD '$password'" \
    -c "CREATE DATABASE lavaserver OWNER lavaserver ENCODING 'UTF8' TEMPLATE template0" >/dev/null
  (umask 077 && echo "$password" >"$state/pg/password")
}

# LAVA's settings, read by every lava-server process spawn and manage start.
write_settings() {
  free_port >"$state/event-port"
  # lava-publisher and lava-scheduler drop root for lavaserver: the
  # publisher's socket is made in a directory of that user.
  mkdir -p "$state/events"
  chown lavaserver: "$state/events"
  local secret
  secret=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  (
    umask 077
    cat >"$state/env" <<EOF
LAVA_YAML_SETTINGS_DATABASES='{default: {ENGINE: django.db.backends.postgresql, NAME: lavaserver, USER: lavaserver, PASSWORD: $(cat "$state/pg/password"), HOST: 127.0.0.1, PORT: $(cat "$state/pg/port")}}'
SECRET_KEY=$secret
LAVA_SETTINGS_MEDIA_ROOT=$state/media/
LAVA_SETTINGS_DJANGO_LOGFILE=$state/log/django.log
LAVA_SETTINGS_DEVICES_PATH=$state/devices
LAVA_SETTINGS_HEALTH_CHECKS_PATH=$state/health-checks
LAVA_SETTINGS_DISPATCHER_CONFIG_PATH=$state/dispatcher.d
LAVA_YAML_SETTINGS_DEVICE_TYPES_PATHS='[$state/device-types, /etc/lava-server/dispatcher-config/device-types, /usr/share/lava-server/device-types]'
LAVA_SETTINGS_EVENT_NOTIFICATION=True
LAVA_SETTINGS_INTERNAL_EVENT_SOCKET=ipc://$state/events/lava.events
LAVA_SETTINGS_EVENT_SOCKET=tcp://127.0.0.1:$(cat "$state/event-port")
EOF
  )
}

# The board's device type, its dictionary and its power switch. The device
# type is LAVA's base-uboot with the virt machine's memory map (RAM from
# 0x40000000, where QEMU leaves the device tree it made for U-Boot; the
# kernel above it, the ramdisk 128 MiB up) and one change to base-uboot's
# commands: the TFTP server is QEMU's own at 10.0.2.2 on the board's user
# network, whatever address the dispatcher has. And LAVA reads the console
# in pieces smaller than the 4000 characters it searches: a piece of its
# default 4092 is searched only in its last 4000, and this console, unlike a
# board's 115200-baud line, brings the kernel's first lines in one burst,
# where "Linux version" (the line LAVA waits for after U-Boot) fell into the
# unsearched start of a piece in about one job of four.
write_board() {
  cat >"$state/device-types/$board_type.jinja2" <<'EOF'
{% extends 'base-uboot.jinja2' %}
{% set console_device = console_device|default('ttyAMA0') %}
{% set booti_kernel_addr = '0x40400000' %}
{% set booti_dtb_addr = '0x40000000' %}
{% set booti_ramdisk_addr = '0x48000000' %}
{% set uboot_mkimage_arch = 'arm64' %}
{% set spawn_maxread = 2048 %}
{% set uboot_tftp_commands = [
    "setenv serverip 10.0.2.2",
    "tftp {KERNEL_ADDR} {KERNEL}",
    "tftp {RAMDISK_ADDR} {RAMDISK}",
    "setenv initrd_size ${filesize}",
    "tftp {DTB_ADDR} {DTB}"] %}
EOF
  free_port >"$state/board/console-port"
  cat >"$state/devices/$board.jinja2" <<EOF
{% extends '$board_type.jinja2' %}
{% set connection_command = 'telnet 127.0.0.1 $(cat "$state/board/console-port")' %}
{% set power_on_command = '$state/board/power on' %}
{% set hard_reset_command = '$state/board/power on' %}
{% set power_off_command = '$state/board/power off' %}
EOF
  # QEMU's human monitor on a socket: on = reset and run, off = pause.
  cat >"$state/board/power" <<EOF
#!/bin/sh
case "\$1" in
  on) commands='system_reset cont' ;;
  off) commands='stop' ;;
  *) echo "usage: \$0 on|off" >&2; exit 2 ;;
esac
exec python3 - "$state/board/monitor.sock" \$commands <<'PY'
import socket, sys
monitor = socket.socket(socket.AF_UNIX)
monitor.connect(sys.argv[1])
monitor.settimeout(10)
# Each command's answer is awaited: the monitor echoes it and prompts again.
reply = b""
for command in sys.argv[2:] + ["info status"]:
    monitor.sendall(command.encode() + b"\n")
while b"VM status" not in reply:
    chunk = monitor.recv(4096)
    if not chunk:
        sys.exit("the board's monitor closed: " + reply.decode(errors="replace"))
    reply += chunk
PY
EOF
  chmod 755 "$state/board/power"
}

# The board, paused until LAVA powers it on. Its network is QEMU's user
# network, whose TFTP server serves LAVA's TFTP directory. Its device tree,
# as QEMU makes it for this machine, is kept for the tests that give a
# swprofile one of its own: one made for other options can describe devices
# this machine lacks (without -bios, QEMU adds a GPIO controller that a
# machine with firmware does not have, and the kernel hangs on it).
spawn_board() {
  local tftp_dir
  # shellcheck disable=SC1091
  tftp_dir=$(. /etc/default/tftpd-hpa && echo "${TFTP_DIRECTORY:-/srv/tftp}")
  mkdir -p "$tftp_dir"
  local machine=(-cpu max -m 512 -smp 1 -accel tcg -nodefaults -display none -bios "$uboot_firmware"
    -netdev "user,id=net0,tftp=$tftp_dir" -device "virtio-net-device,netdev=net0")
  qemu-system-aarch64 -machine "virt,dumpdtb=$state/board/board.dtb" "${machine[@]}" >"$state/log/dumpdtb.log" 2>&1 ||
    die "qemu-system-aarch64 could not make the board's device tree (log in $state/log/dumpdtb.log)"
  spawn board qemu-system-aarch64 -S -machine virt "${machine[@]}" \
    -serial "telnet:127.0.0.1:$(cat "$state/board/console-port"),server=on,wait=off" \
    -monitor "unix:$state/board/monitor.sock,server=on,wait=off"
}

# Django's migrations and LAVA's objects: what a job needs in the database.
set_up_database() {
  manage migrate --noinput >"$state/log/migrate.log" 2>&1 \
    || { tail -20 "$state/log/migrate.log" >&2; die "lava-server manage migrate failed"; }
  local password
  password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  manage users add "$admin" --superuser --staff --passwd "$password" >/dev/null
  (umask 077 && echo "$password" >"$state/password" && manage tokens add --user "$admin" --description kbench-tests >"$state/token")

  # Device type qemu without health checks: HEALTH_CHECKS_PATH is an empty
  # directory, so the scheduler schedules no health check job for the device
  # and a device set Good stays Good.
  manage device-types add qemu >/dev/null
  # The worker authenticates with the token `workers add` prints.
  manage workers add "$worker_name" --description "kbench test worker" \
    | sed -n 's/^Token: //p' >"$state/worker-token"
  [ -s "$state/worker-token" ] || die "lava-server manage workers add printed no token"
  manage devices add "$device" --device-type qemu --worker "$worker_name" \
    --description "kbench test device (x86_64 under TCG)" >/dev/null
  manage devices update "$device" --health GOOD >/dev/null
  manage device-types add "$board_type" >/dev/null
  manage devices add "$board" --device-type "$board_type" --worker "$worker_name" \
    --description "kbench test board (QEMU's aarch64 virt machine with U-Boot, under TCG)" >/dev/null
  manage devices update "$board" --health GOOD >/dev/null
}

# The cache's key: whatever the database it holds was made by. The whole
# script rather than its setup alone: a key too strict only costs a start.
cache_key() {
  {
    cat "${BASH_SOURCE[0]}"
    echo "$pgbin"
    dpkg-query -W -f='${Package} ${Version}\n' lava-server lava-common python3-django 2>&1
  } | sha256sum | cut -c1-16
}

# The cluster stopped, copied into the cache with the secrets that go with
# it (the roles' passwords and tokens), then started again. Built beside the
# entry and renamed: a cache entry is whole or absent, also when another
# state directory's `start` builds the same one at the same time. Entries of
# other keys are removed (they are 50 MB each).
save_database() {
  local key=$1 tmp
  stop_cluster || die "PostgreSQL did not stop (log in $state/pg/server.log)"
  mkdir -p "$cache_root"
  chmod 700 "$cache_root"
  tmp=$(mktemp -d "$cache_root/.new.XXXXXX")
  if cp -a "$state/pg/data" "$tmp/data" && cp -a "$state/pg/password" "$tmp/pg-password" &&
    cp -a "$state/password" "$state/token" "$state/worker-token" "$tmp/"; then
    find "$cache_root" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name '.new.*' -exec rm -rf {} +
    mv -T "$tmp" "$cache_root/$key" 2>/dev/null || rm -rf "$tmp"
  else
    rm -rf "$tmp"
    echo "lava-test-server: could not keep the database in $cache_root (went on without)" >&2
  fi
  run_cluster
}

# The cached database of `key` as pg/data, its cluster started; false (and
# nothing left of it) when there is none or it does not start, and the
# entry is removed then, so that the next start builds it again.
restore_database() {
  local entry=$cache_root/$1
  [ -n "$pgbin" ] && [ -x "$pgbin/pg_ctl" ] && [ -f "$entry/token" ] && [ -d "$entry/data" ] || return 1
  mkdir -p "$state/pg"
  chown postgres: "$state/pg"
  if cp -a "$entry/data" "$state/pg/data" && cp -a "$entry/pg-password" "$state/pg/password" &&
    cp -a "$entry/password" "$entry/token" "$entry/worker-token" "$state/" && (run_cluster) 2>/dev/null; then
    return 0
  fi
  echo "lava-test-server: the cached database in $entry did not start; building it again" >&2
  [ -f "$state/pg/data/postmaster.pid" ] && stop_cluster
  rm -rf "$state/pg" "$state/password" "$state/token" "$state/worker-token" "$entry"
  return 1
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (apt-get, the LAVA dispatcher)"
  # A running server that is slow to answer (a loaded machine) is given a
  # minute before it is taken for dead and built again.
  if [ -d "$state" ] && all_alive; then
    local _
    for _ in $(seq 1 30); do
      answering && { print_exports; return; }
      all_alive || break
      sleep 2
    done
  fi
  [ -d "$state" ] && [ -f "$state/.kbench-lava-test" ] && stop
  [ -d "$state" ] && [ ! -f "$state/.kbench-lava-test" ] && [ -n "$(ls -A "$state")" ] \
    && die "$state exists and was not made by this script"
  mkdir -p "$state"
  chmod 711 "$state"
  touch "$state/.kbench-lava-test"
  # A `start` that fails halts what it started but keeps the directory, whose
  # logs the error points at; the next `start` or `stop` removes it.
  trap halt_on_failure EXIT
  install_packages
  mkdir -p "$state"/{log,pids,media,devices,device-types,health-checks,dispatcher.d,worker,board}
  # The device's dictionary is a file, not in the database.
  # no_kvm: /dev/kvm may be missing or unusable here; QEMU runs under TCG.
  cat >"$state/devices/$device.jinja2" <<'EOF'
{% extends 'qemu.jinja2' %}
{% set no_kvm = True %}
{% set memory = 512 %}
{% set mac_addr = '52:54:00:12:34:59' %}
EOF
  write_board
  local key
  key=$(cache_key)
  if ! restore_database "$key"; then
    init_cluster
    run_cluster
    create_database
    write_settings
    set_up_database
    save_database "$key"
  fi
  write_settings

  local port
  port=$(free_port)
  echo "http://127.0.0.1:$port/" >"$state/url"
  spawn_board
  spawn gunicorn gunicorn lava_server.wsgi --bind "127.0.0.1:$port" --workers 2 --timeout 120
  # lava-publisher relays the server's events (ZMQ, EVENT_SOCKET) to the
  # scheduler and, over a websocket, to the worker: a submitted job is
  # scheduled and picked up at once rather than at the scheduler's next 20 s
  # round and the worker's next ping.
  local ws_port
  ws_port=$(free_port)
  spawn publisher lava-server manage lava-publisher --level DEBUG --log-file - --host 127.0.0.1 --port "$ws_port"
  spawn scheduler lava-server manage lava-scheduler --level DEBUG --log-file - \
    --event-url "tcp://127.0.0.1:$(cat "$state/event-port")"
  # The worker learns that a job's lava-run has exited at its next ping to the
  # server (nothing tells it sooner): every 20 s by default, which would add
  # up to 20 s to every job's end. One a second, the least it takes, adds
  # half a second on average; a ping costs the worker and the server about
  # 8 ms of CPU (measured idle: 80 ms over 10 pings).
  spawn worker lava-worker --level DEBUG --log-file - --url "$(cat "$state/url")" --name "$worker_name" \
    --ws-url "http://127.0.0.1:$ws_port/ws/" --ping-interval 1 \
    --token-file "$state/worker-token" --worker-dir "$state/worker"

  # Looked at often: the server is up within seconds of its processes'
  # start, and each look is three short processes.
  local deadline=$((SECONDS + 180))
  until ready; do
    for p in gunicorn publisher scheduler worker; do
      alive "$p" || { tail -20 "$state/log/$p.log" >&2; die "$p exited (log in $state/log/$p.log)"; }
    done
    [ "$SECONDS" -ge "$deadline" ] && die "the device is not Idle/Good with its worker Online after 180 s (logs in $state/log)"
    sleep 0.3
  done
  trap - EXIT
  print_exports
}

any_alive() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# SIGKILL to every process group: nothing of theirs is kept (the state
# directory goes, the database is stopped after them), so a graceful exit
# buys nothing, and SIGTERM cost 2-7 s (lava-publisher the longest). Then
# waited for, so that none of them still holds the database's connections.
stop_processes() {
  local f pid pids=() _
  for f in "$state"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for _ in $(seq 1 100); do
    any_alive "${pids[@]}" || break
    sleep 0.1
  done
  rm -f "$state"/pids/*.pid
}

halt() {
  stop_processes
  if [ -n "$pgbin" ] && [ -f "$state/pg/data/postmaster.pid" ]; then
    runuser -u postgres -- "$pgbin/pg_ctl" -D "$state/pg/data" -m fast stop >/dev/null 2>&1 || true
  fi
}

halt_on_failure() {
  local rc=$?
  [ "$rc" -eq 0 ] || halt >/dev/null 2>&1
}

stop() {
  [ -d "$state" ] || return 0
  halt
  # Only a directory this script made is removed.
  [ -f "$state/.kbench-lava-test" ] && rm -rf "$state"
  return 0
}

status() {
  [ -d "$state" ] && all_alive && answering || return 1
  print_exports
}

# One start or stop at a time.
exec 9>"$state.lock"
flock 9
case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  # The packages alone, for scripts/install-deps.sh: what `start` would install.
  install) install_packages ;;
  *) echo "usage: $0 start|stop|status|install" >&2; exit 2 ;;
esac
