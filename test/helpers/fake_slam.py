"""Stands in for the ORB-SLAM process in the SLAM bridge tests: prints the lines of the
file given as argument (one per line, flushed, ``SLEEP s`` pauses, ``{mono}`` replaced by
the monotonic clock in ns at printing), then exits with the
code given as second argument, or waits forever when it is ``wait``."""
import sys
import time

lines_file, then = sys.argv[1], sys.argv[2]
for line in open(lines_file, encoding="utf-8").read().splitlines():
    if line.startswith("SLEEP "):
        time.sleep(float(line.split()[1]))
        continue
    sys.stdout.write(line.replace("{mono}", str(time.monotonic_ns())) + "\n")
    sys.stdout.flush()
if then == "wait":
    while True:
        time.sleep(1)
sys.exit(int(then))
