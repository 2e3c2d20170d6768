#!/usr/bin/env python3
"""Alternating measuring children of two eventlog-benchmarks builds (Docs/Benchmarks.md, "Comparing
two builds: alternating pairs"): A B, then B A, ... pair by pair, one system (eventlog, or
$PAIRS_SYSTEM); the ratio B/A of
each pair's CPU seconds (user + system, every thread of the child) and wall seconds, summed over
the child's measured runs. Stops when the two children's outcome lines differ.

usage: chain-pairs.py WORKLOAD SIZE PAIRS WARMUPS RUNS BINARY_A BINARY_B
  Fixtures (replay, read.all, sync.diff: each build prepares its own, once) and scratch
  directories go under $PAIRS_DIR (a real disk; default /work/chainbench/pairs).
  Prints each pair with the load average at its start, then the medians and ranges.
"""
import json, os, shutil, statistics, subprocess, sys, time

workload, size, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
warmups, runs = int(sys.argv[4]), int(sys.argv[5])
binaries = {"A": sys.argv[6], "B": sys.argv[7]}
root = os.environ.get("PAIRS_DIR", "/work/chainbench/pairs")
system = os.environ.get("PAIRS_SYSTEM", "eventlog")
needs_fixture = not workload.startswith("append.")


def child(name, mode, fixture, directory):
    request = {"mode": mode, "workload": workload, "system": system, "size": size, "batchSize": 1000,
               "ids": 7, "fixture": fixture, "directory": directory,
               "warmups": warmups if mode == "measure" else 0, "runs": runs if mode == "measure" else 0}
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, exist_ok=True)
    out = subprocess.run([binaries[name], "--internal-child", json.dumps(request)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1]) if out.strip() else None


fixtures = {}
for name in binaries:
    fixtures[name] = None
    if needs_fixture:
        path = f"{root}/fixture-{system}-{workload}-{size}-{name}"
        if not os.path.isdir(path):
            started = time.time()
            child(name, "prepare", path, f"{root}/prep-{name}")
            print(f"# {name} prepared {path} in {time.time() - started:.1f} s", flush=True)
        fixtures[name] = path

print(f"# {system} {workload} @ {size}, {pairs} pairs, {warmups} warm-up(s) + {runs} run(s) per child;"
      f" A = {binaries['A']}, B = {binaries['B']}; started {time.strftime('%H:%M:%S', time.gmtime())} UTC",
      flush=True)
cpu, wall, loads = [], [], []
for i in range(pairs):
    order = ("A", "B") if i % 2 == 0 else ("B", "A")
    load = os.getloadavg()[0]
    loads.append(load)
    result = {name: child(name, "measure", fixtures[name], f"{root}/run-{name}") for name in order}
    a, b = result["A"], result["B"]
    if a["check"] != b["check"]:
        sys.exit(f"pair {i + 1}: the outcomes differ: A {a['check']!r}, B {b['check']!r}")
    operations = a["operations"] * len(a["cpuSeconds"])
    cpu.append(sum(b["cpuSeconds"]) / sum(a["cpuSeconds"]))
    wall.append(sum(b["seconds"]) / sum(a["seconds"]))
    print(f"pair {i + 1} ({order[0]} first, load {load:.2f}): A {sum(a['cpuSeconds']) / operations * 1e6:.3f} µs"
          f" CPU/op, {sum(a['seconds']) / operations * 1e6:.3f} µs wall/op | B"
          f" {sum(b['cpuSeconds']) / operations * 1e6:.3f} µs CPU/op, {sum(b['seconds']) / operations * 1e6:.3f}"
          f" µs wall/op | CPU B/A {cpu[-1]:.3f}, wall B/A {wall[-1]:.3f} | {a['check'][:70]}", flush=True)
print(f"{system} {workload} @ {size}, {pairs} pairs: CPU B/A median {statistics.median(cpu):.3f}"
      f" ({min(cpu):.3f}-{max(cpu):.3f}), wall median {statistics.median(wall):.3f}"
      f" ({min(wall):.3f}-{max(wall):.3f}); load average (1 min) {min(loads):.2f}-{max(loads):.2f};"
      f" ended {time.strftime('%H:%M:%S', time.gmtime())} UTC")
