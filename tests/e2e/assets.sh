#!/usr/bin/env bash
# The shell kbench sends to SUTs (assets/*/*.sh) passes shellcheck as POSIX sh,
# each script as it is sent: the continuations of the deploy scripts joined
# as src/deploy/deployer.cpp joins them, the qemu method's /init fragments as
# src/sut/qemu.cpp joins them (busybox sh, POSIX sh to shellcheck), and a
# deliberately broken script is caught (so the check can fail). The HTML
# pages' scripts (assets/html/*.js) parse as JavaScript.
source "$(dirname "$0")/lib.bash"
assets=$(cd "$(dirname "$0")/../../assets" && pwd)
command -v shellcheck >/dev/null || fail "shellcheck missing (scripts/install-deps.sh installs it)"

lint() {  # lint NAME FILE...: the files joined, checked as one sh script
  local name=$1; shift
  cat "$@" >"$WORK/$name"
  shellcheck --shell=sh --severity=warning "$WORK/$name" >"$WORK/$name.out" 2>&1
}

deploy=$assets/deploy
for script in "$deploy"/*.sh; do
  case $(basename "$script") in
    # Sent only after activate_function.sh (and unpack_finish.sh after unpack.sh).
    unpack.sh | unpack_finish.sh | boot.sh) continue ;;
  esac
  if lint "$(basename "$script")" "$script"; then pass; else
    fail "$(basename "$script"): $(cat "$WORK/$(basename "$script").out")"
  fi
done
if lint unpack "$deploy/activate_function.sh" "$deploy/unpack.sh" "$deploy/unpack_finish.sh"; then pass; else
  fail "activate_function + unpack + unpack_finish: $(cat "$WORK/unpack.out")"
fi
if lint boot "$deploy/activate_function.sh" "$deploy/boot.sh"; then pass; else
  fail "activate_function + boot: $(cat "$WORK/boot.out")"
fi

sut=$assets/sut
for channel in x86 virtio; do
  if lint "init_$channel" "$sut/init_mounts.sh" "$sut/init_results_$channel.sh" "$sut/init_run.sh" \
    "$sut/init_end_poweroff.sh"; then pass; else
    fail "/init with the $channel results channel: $(cat "$WORK/init_$channel.out")"
  fi
done
# The lava connection's /init: the console as results channel, a shell at the end.
if lint init_lava "$sut/init_mounts.sh" "$sut/init_results_console.sh" "$sut/init_run.sh" "$sut/init_end_shell.sh"; then
  pass
else
  fail "/init of the lava connection: $(cat "$WORK/init_lava.out")"
fi
for script in "$sut"/ssh_*.sh; do
  if lint "$(basename "$script")" "$script"; then pass; else
    fail "$(basename "$script"): $(cat "$WORK/$(basename "$script").out")"
  fi
done
# A script added to assets/sut/ under another name would be checked by nobody.
if [ "$(find "$sut" -name '*.sh' ! -name 'init_*' ! -name 'ssh_*' | wc -l)" -eq 0 ]; then pass; else
  fail "assets/sut holds a script this test does not check"
fi

for script in "$assets"/html/*.js; do
  if node --check "$script" 2>"$WORK/node.err"; then pass; else fail "$(basename "$script"): $(cat "$WORK/node.err")"; fi
done
printf 'function (\n' >"$WORK/broken.js"
if node --check "$WORK/broken.js" 2>/dev/null; then fail "node --check passed a broken script"; else pass; fi

# The check fails on a script that uses a variable it never sets.
# shellcheck disable=SC2016  # the $dir is the broken script's
printf 'rm -rf $dir/x\n' >"$WORK/broken.sh"
if lint broken "$WORK/broken.sh"; then fail "shellcheck passed a broken script"; else pass; fi
finish
