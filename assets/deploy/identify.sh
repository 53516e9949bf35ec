echo "release=$(uname -r)"
echo "version=$(uname -v)"
echo "cmdline=$(cat /proc/cmdline)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"