# x86-64: the PC's second 16550 UART, set raw so that no byte is translated.
results=/dev/ttyS1
stty -F $results raw -echo 2>/dev/null
