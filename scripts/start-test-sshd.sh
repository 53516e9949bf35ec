#!/usr/bin/env bash
# Starts a throwaway OpenSSH server on 127.0.0.1 for the ssh connection tests:
# generated host key, generated client key, a free port, a known_hosts file
# written from the host key. Nothing outside DIR is touched (except /run/sshd,
# the privilege separation directory sshd insists on).
#   start-test-sshd.sh DIR   -> writes DIR/env (SSHD_PID, SSHD_PORT, SSH_KEY,
#                               SSH_KNOWN_HOSTS, SSH_USER) and prints its path
# Stop with: kill "$(cat DIR/sshd.pid)". Exit 77 when sshd is not installed.
set -euo pipefail

dir=${1:?usage: start-test-sshd.sh DIR}
sshd_bin=${SSHD:-/usr/sbin/sshd}
if [ ! -x "$sshd_bin" ]; then
  echo "skipped: $sshd_bin not found (Debian package openssh-server)" >&2
  exit 77
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
chmod 700 "$dir"

ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" -C kbench-test-host
ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key" -C kbench-test-client
cp "$dir/client_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"

if [ "$(id -u)" -eq 0 ]; then
  mkdir -p /run/sshd
  chmod 755 /run/sshd
fi

user=$(id -un)
for attempt in 1 2 3 4 5; do
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat > "$dir/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
AllowUsers $user
LogLevel ERROR
CONF
  rm -f "$dir/sshd.pid"
  # -D keeps it in the foreground of its own background job; -e logs to stderr.
  # setsid: a caller that kills our process group must not take sshd with it.
  setsid "$sshd_bin" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$pid" > "$dir/sshd.pid"
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_key.pub")" > "$dir/known_hosts"
    cat > "$dir/env" <<ENV
SSHD_PID=$pid
SSHD_PORT=$port
SSH_KEY=$dir/client_key
SSH_KNOWN_HOSTS=$dir/known_hosts
SSH_USER=$user
ENV
    echo "$dir/env"
    exit 0
  fi
done
echo "start-test-sshd: sshd did not start; log:" >&2
cat "$dir/sshd.log" >&2
exit 1
