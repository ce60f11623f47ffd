#!/usr/bin/env python3
"""Time whole processes interleaved: round r runs every command once (the order reversed every
other round), so a noisy neighbour or a CPU-frequency change hits all of them alike instead of
whichever was measured in that minute. Per run: wall time (spawn to reaped) and the child's CPU
time (user + system, from wait4's rusage). Commands are spawned directly (posix_spawn, no shell,
no `env` wrapper); leading NAME=value words are set in the child's environment by this script.

Usage: interleave.py [--runs N] [--warmup W] [--json FILE] [--fresh FILE]... LABEL CMD [LABEL CMD ...]
Prints one line per command: label, median/min/max wall ms, median CPU ms. With --json, the
raw samples too. --fresh FILE empties FILE before every run, untimed: a hook appends to enroot's
environment file, and each container start gets a new one (a file that grew over the runs made
every later run read all the earlier runs' lines).

       interleave.py --count [--no-instructions] [--fresh FILE]... CMD
Prints "files syscalls instructions" for one run of CMD, the whole process tree: files opened
(open/openat/openat2 calls, strace -f), system calls (strace -f -c) and instructions (valgrind
callgrind, children traced); "-" where the tool is missing or not asked.
"""
import json
import os
import shlex
import shutil
import statistics
import sys
import time


def parse(cmd):
    words = shlex.split(cmd)
    env = dict(os.environ)
    while words and "=" in words[0] and not words[0].startswith("="):
        k, v = words.pop(0).split("=", 1)
        if not k.replace("_", "").isalnum():
            break
        env[k] = v
    # Looked up once, in the child's PATH (posix_spawnp would search this script's PATH).
    found = shutil.which(words[0], path=env.get("PATH", os.defpath)) if words else None
    if not found:
        sys.exit(f"interleave.py: {words[0] if words else '(empty)'}: not found")
    return [found] + words[1:], env


def once(words, env):
    null = os.open(os.devnull, os.O_RDWR)
    fa = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(words[0], words, env, file_actions=fa)
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns()
    os.close(null)
    return (t1 - t0) / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3, os.waitstatus_to_exitcode(status)


def count(a):
    import subprocess
    import tempfile
    instr, fresh = True, []
    while a and a[0] in ("--no-instructions", "--fresh"):
        if a[0] == "--no-instructions":
            instr, a = False, a[1:]
        else:
            fresh.append(a[1])
            a = a[2:]

    def empty():
        for f in fresh:
            open(f, "w").close()
    words, env = parse(a[0])
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    files = calls = ins = "-"
    with tempfile.TemporaryDirectory() as d:
        if shutil.which("strace"):
            empty()
            subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", f"{d}/o"] + words, **quiet)
            files = str(sum(1 for l in open(f"{d}/o") if "open" in l and "resumed>" not in l))
            empty()
            subprocess.run(["strace", "-f", "-c", "-o", f"{d}/c"] + words, **quiet)
            for l in open(f"{d}/c"):
                f = l.split()
                if f and f[-1] == "total":
                    calls = f[-3] if len(f) >= 5 else f[-2]
        if instr and shutil.which("valgrind"):
            empty()
            subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={d}/cg.%p",
                            f"--log-file={d}/vg.%p"] + words, **quiet)
            total = 0
            for n in os.listdir(d):
                if n.startswith("vg."):
                    for l in open(f"{d}/{n}"):
                        if "Collected :" in l:
                            total += int(l.split(":")[-1])
            ins = str(total)
    print(files, calls, ins)


def main():
    a = sys.argv[1:]
    if a and a[0] == "--count":
        return count(a[1:])
    runs, warm, out, fresh = 50, 5, None, []
    while a and a[0].startswith("--"):
        opt = a.pop(0)
        if opt == "--runs":
            runs = int(a.pop(0))
        elif opt == "--warmup":
            warm = int(a.pop(0))
        elif opt == "--json":
            out = a.pop(0)
        elif opt == "--fresh":
            fresh.append(a.pop(0))
        else:
            sys.exit(f"interleave.py: unknown option {opt}")
    if len(a) < 2 or len(a) % 2:
        sys.exit(__doc__)
    cases = [(a[i], *parse(a[i + 1])) for i in range(0, len(a), 2)]
    samples = {label: {"wall_ms": [], "cpu_ms": [], "rc": set()} for label, _, _ in cases}
    for r in range(warm + runs):
        order = cases if r % 2 == 0 else list(reversed(cases))
        for label, words, env in order:
            for f in fresh:
                open(f, "w").close()
            wall, cpu, rc = once(words, env)
            if r >= warm:
                s = samples[label]
                s["wall_ms"].append(wall)
                s["cpu_ms"].append(cpu)
                s["rc"].add(rc)
    result = {}
    for label, _, _ in cases:
        s = samples[label]
        result[label] = {
            "median_ms": statistics.median(s["wall_ms"]),
            "min_ms": min(s["wall_ms"]),
            "max_ms": max(s["wall_ms"]),
            "cpu_median_ms": statistics.median(s["cpu_ms"]),
            "exit_codes": sorted(s["rc"]),
            "wall_ms": s["wall_ms"],
            "cpu_ms": s["cpu_ms"],
        }
        print(f"{label}\t{result[label]['median_ms']:.2f}\t{result[label]['min_ms']:.2f}\t"
              f"{result[label]['max_ms']:.2f}\t{result[label]['cpu_median_ms']:.2f}\t{sorted(s['rc'])}")
    if out:
        json.dump({"runs": runs, "warmup": warm, "results": result}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
