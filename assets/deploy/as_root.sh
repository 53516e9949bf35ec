s=$1; shift
if [ "$(id -u)" -eq 0 ]; then exec sh -c "$s" kbench "$@"; fi
command -v sudo >/dev/null 2>&1 || { echo "kbench needs root on the SUT to install kernels: log in as root or allow passwordless sudo" >&2; exit 3; }
exec sudo -n sh -c "$s" kbench "$@"