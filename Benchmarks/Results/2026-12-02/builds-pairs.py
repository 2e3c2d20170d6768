#!/usr/bin/env python3
"""Alternating measuring children of two eventlog-benchmarks builds (Docs/Benchmarks.md, "Comparing
two builds"): A B, B A, ... pair by pair, the ratio head/base of each pair's CPU and wall seconds.

usage: builds-pairs.py WORKLOAD SIZE RUNS WARMUPS PAIRS BASE HEAD
  run in a directory holding BASE-benchmarks and HEAD-benchmarks (release builds); each build's
  fixture (<build>-<workload>-fixture) is prepared by that build when it is missing.
"""
import json, os, shutil, statistics, subprocess, sys

workload, size, runs, warmups, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
base, head = sys.argv[6], sys.argv[7]


def child(build, mode, runs=0, warmups=0):
    request = {"mode": mode, "workload": workload, "system": "eventlog", "size": size, "batchSize": 1000, "ids": 7,
               "fixture": f"./{build}-{workload}-fixture", "directory": f"./{build}-{workload}-scratch",
               "warmups": warmups, "runs": runs}
    os.makedirs(request["directory"], exist_ok=True)
    out = subprocess.run([f"./{build}-benchmarks", "--internal-child", json.dumps(request)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out) if out else None


for build in (base, head):
    if not os.path.isdir(f"./{build}-{workload}-fixture"):
        child(build, "prepare")
cpu, wall = [], []
for i in range(pairs):
    order = (base, head) if i % 2 == 0 else (head, base)
    result = {b: child(b, "measure", runs, warmups) for b in order}
    b, h = result[base], result[head]
    assert b["check"] == h["check"], (b["check"], h["check"])
    cpu.append(sum(h["cpuSeconds"]) / sum(b["cpuSeconds"]))
    wall.append(sum(h["seconds"]) / sum(b["seconds"]))
    print(f"pair {i + 1} ({order[0]} first): {base} cpu {sum(b['cpuSeconds']):.3f} s wall {sum(b['seconds']):.3f} s"
          f" | {head} cpu {sum(h['cpuSeconds']):.3f} s wall {sum(h['seconds']):.3f} s"
          f" | cpu ratio {cpu[-1]:.3f} wall ratio {wall[-1]:.3f} | {b['check'][:60]}", flush=True)
print(f"{workload} @ {size}, {pairs} pairs: CPU {head}/{base} median {statistics.median(cpu):.3f}"
      f" ({min(cpu):.3f}-{max(cpu):.3f}), wall median {statistics.median(wall):.3f} ({min(wall):.3f}-{max(wall):.3f})")
print("load", os.getloadavg())
