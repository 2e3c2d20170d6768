#!/usr/bin/env python3
"""Alternating pairs of eventlog-benchmarks measuring children (Docs/Benchmarks.md, Findings):
main's build (A) and the branch's (B), each on a fixture it built itself, A B A B ...;
prints each child's CPU and wall seconds per operation and the ratio B/A of each pair.

Usage: layouts-pairs.py WORKLOAD SIZE PAIRS WARMUPS RUNS [BINARY_A BINARY_B]; fixtures and scratch
directories go to $PAIRS_DIR (a real disk; default /work/bench-layouts)."""
import json, subprocess, sys, statistics, os, shutil

A = sys.argv[6] if len(sys.argv) > 6 else "/work/wt/layouts-base/.build/release/eventlog-benchmarks"
B = sys.argv[7] if len(sys.argv) > 7 else "/work/wt/layouts/.build/release/eventlog-benchmarks"
root = os.environ.get("PAIRS_DIR", "/work/bench-layouts")
workload, size, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
warmups, runs = int(sys.argv[4]), int(sys.argv[5])

def request(mode, fixture, directory):
    return json.dumps({"mode": mode, "workload": workload, "system": "eventlog", "size": size,
                       "batchSize": 1000, "ids": 7, "fixture": fixture, "directory": directory,
                       "warmups": warmups if mode == "measure" else 0,
                       "runs": runs if mode == "measure" else 0})

def child(binary, mode, fixture, directory):
    os.makedirs(directory, exist_ok=True)
    out = subprocess.run([binary, "--internal-child", request(mode, fixture, directory)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])

fixtures = {}
for name, binary in (("A", A), ("B", B)):
    fixtures[name] = None
    if workload == "replay":
        path = f"{root}/fixture-{workload}-{size}-{name}"
        if not os.path.exists(path):
            child(binary, "prepare", path, f"{root}/prep-{name}")
        fixtures[name] = path

ratios, wall_ratios = [], []
for pair in range(pairs):
    result = {}
    for name, binary in (("A", A), ("B", B)):
        directory = f"{root}/run-{name}"
        shutil.rmtree(directory, ignore_errors=True)
        report = child(binary, "measure", fixtures[name], directory)
        ops = report["operations"] * len(report["cpuSeconds"])
        result[name] = (sum(report["cpuSeconds"]) / ops, sum(report["seconds"]) / ops, report["check"])
    cpu = result["B"][0] / result["A"][0]
    wall = result["B"][1] / result["A"][1]
    ratios.append(cpu); wall_ratios.append(wall)
    same = result["A"][2] == result["B"][2]
    print(f"pair {pair + 1}: A {result['A'][0]*1e6:.3f} µs, B {result['B'][0]*1e6:.3f} µs CPU/op; "
          f"CPU B/A {cpu:.3f}, wall B/A {wall:.3f}; outcome equal: {same}", flush=True)
print(f"{workload} @ {size}, {pairs} pairs: CPU B/A median {statistics.median(ratios):.3f} "
      f"({min(ratios):.3f}-{max(ratios):.3f}), wall median {statistics.median(wall_ratios):.3f} "
      f"({min(wall_ratios):.3f}-{max(wall_ratios):.3f})")
