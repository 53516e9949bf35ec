# Runs the agent as its own process group (setsid) and watches the stdin of
# the ssh session: the ssh of the controller keeps it open, so it ends only
# when the connection drops or ssh is killed, and then the agent is told to
# stop (SIGTERM: it kills every task its benchmark started) and its group is
# killed (after at most 10 s) instead of running on unobserved. POSIX sh, and
# no single quotes in here, comments included: the script travels
# single-quoted on the ssh command line (process::shell_join).
a=$1; shift
exec 3<&0 </dev/null
if command -v setsid >/dev/null 2>&1; then setsid "$a" "$@" & else "$a" "$@" & fi
p=$!
( cat <&3 >/dev/null 2>&1; kill -TERM "$p" 2>/dev/null
  i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 10 ]; do sleep 1; i=$((i+1)); done
  kill -KILL -"$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null ) >/dev/null 2>&1 &
w=$!
exec 3<&-
wait "$p"; s=$?
kill -KILL "$w" 2>/dev/null
exit "$s"