if command -v systemctl >/dev/null 2>&1; then
  timeout 150 systemctl is-system-running --wait >/dev/null 2>&1
fi
exit 0