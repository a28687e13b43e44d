#!/usr/bin/env bash
# The CPU of a compactsim run split between the Rust process (compactsim itself, all its
# threads) and its children (the adapter processes and anything they start): prints the
# seconds of each (user + system) and the Rust share of the total. The command's own
# output goes to stderr; the split is the last three lines on stdout, after a line of
# detail (user and system time, page faults, context switches).
#
#   scripts/cpu-split.sh target/release/compactsim run --compactor external \
#     --adapter 'target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py' \
#     --strategy batch --era b --cases 96 --jobs 1 --quiet --out /tmp/split
#
# How: a Python parent marks itself a child subreaper (orphaned adapters are reparented
# to it, so nothing escapes the count), starts the command, waits for it to exit without
# reaping it (`waitid(WNOWAIT)`), reads its own utime + stime from /proc/<pid>/stat
# (clock ticks), then reaps it and every remaining descendant: the total is the
# parent's children usage (getrusage(RUSAGE_CHILDREN)), the children's share the total
# less the Rust process's. The exit code is the command's. Figures measured while other
# work runs on the machine are "under contention": CPU seconds move less than wall time
# but do move (caches, frequency).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
exec python3 - "$@" <<'PY'
import ctypes, os, resource, subprocess, sys

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit(f"cpu-split: prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}")

child = subprocess.Popen(sys.argv[1:], stdout=sys.stderr)
os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
with open(f"/proc/{child.pid}/stat") as f:
    # Fields after the command name (which may hold spaces): utime and stime are the
    # 14th and 15th fields of the line.
    fields = f.read().rsplit(")", 1)[1].split()
ticks = os.sysconf("SC_CLK_TCK")
rust_s = (int(fields[11]) + int(fields[12])) / ticks
code = child.wait()
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
total_s = usage.ru_utime + usage.ru_stime
children_s = max(total_s - rust_s, 0.0)
share = 100.0 * rust_s / total_s if total_s > 0 else 0.0
# One line of detail before the split: user and system seconds of compactsim and of all,
# minor page faults and context switches (voluntary + involuntary) of all.
rust_user_s, rust_sys_s = int(fields[11]) / ticks, int(fields[12]) / ticks
print(f"detail rust_user_s {rust_user_s:.2f} rust_sys_s {rust_sys_s:.2f} "
      f"all_user_s {usage.ru_utime:.2f} all_sys_s {usage.ru_stime:.2f} "
      f"minor_faults {usage.ru_minflt} context_switches {usage.ru_nvcsw}+{usage.ru_nivcsw}")
print(f"rust_cpu_s {rust_s:.2f}")
print(f"children_cpu_s {children_s:.2f}")
print(f"rust_share_pct {share:.1f}")
sys.exit(code if code >= 0 else 128 - code)
PY
