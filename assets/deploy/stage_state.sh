d=$1
if [ -f "$d/ready" ]; then echo "ready $(cat "$d/release")"; else echo missing; fi