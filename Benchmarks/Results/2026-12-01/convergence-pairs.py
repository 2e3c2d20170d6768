# Alternating measuring children of two builds (Benchmarks/Results/FINDINGS.md, finding 9): python3 convergence-pairs.py WORKLOAD SIZE RUNS WARMUPS PAIRS
# in a directory holding main-benchmarks and conv-benchmarks (release builds) and, for each, a fixture
# <build>-<workload>-fixture prepared by the same build ("mode":"prepare") and a scratch directory <build>-<workload>-scratch.
import json, subprocess, sys, statistics, os, time
workload, size, runs, warmups, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def measure(build):
    req = {"mode":"measure","workload":workload,"system":"eventlog","size":size,"batchSize":1000,"ids":7,
           "fixture":f"./{build}-{workload}-fixture","directory":f"./{build}-{workload}-scratch","warmups":warmups,"runs":runs}
    out = subprocess.run([f"./{build}-benchmarks","--internal-child",json.dumps(req)],capture_output=True,text=True,check=True).stdout
    r = json.loads(out)
    return sum(r["cpuSeconds"]), sum(r["seconds"]), r["check"], r["peakAnonBytes"]
cpu, wall = [], []
for i in range(pairs):
    first, second = ("main","conv") if i % 2 == 0 else ("conv","main")
    res = {}
    for b in (first, second): res[b] = measure(b)
    m, c = res["main"], res["conv"]
    assert m[2] == c[2], (m[2], c[2])
    cpu.append(c[0]/m[0]); wall.append(c[1]/m[1])
    print(f"pair {i+1} ({first} first): main cpu {m[0]:.3f} s wall {m[1]:.3f} s heap {m[3]/2**20:.1f} MiB | conv cpu {c[0]:.3f} s wall {c[1]:.3f} s heap {c[3]/2**20:.1f} MiB | cpu ratio {cpu[-1]:.3f} wall ratio {wall[-1]:.3f} | {m[2][:60]}", flush=True)
print(f"{workload} @ {size}, {pairs} pairs: CPU conv/main median {statistics.median(cpu):.3f} ({min(cpu):.3f}–{max(cpu):.3f}), wall median {statistics.median(wall):.3f} ({min(wall):.3f}–{max(wall):.3f})")
print("load", os.getloadavg())
