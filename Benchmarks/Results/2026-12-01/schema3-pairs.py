#!/usr/bin/env python3
"""Alternating measuring children of two eventlog-benchmarks builds (Docs/Benchmarks.md, "Findings":
A B A B ..., the ratio of each pair), for the replicate workloads, against one throwaway PostgreSQL
server started as PostgresTestServer starts it (fsync off, full_page_writes off, a Unix socket).

usage: schema3-pairs.py PAIRS SIZE NAME=BINARY NAME=BINARY [WORKLOAD:SYSTEM ...]
"""
import json
import os
import pwd
import random
import shutil
import statistics
import subprocess
import sys
import time

pairs, size = int(sys.argv[1]), int(sys.argv[2])
builds = [tuple(arg.split("=", 1)) for arg in sys.argv[3:5]]
combos = [tuple(arg.split(":")) for arg in sys.argv[5:]] or [
    ("replicate.push", "eventlog"), ("replicate.push", "libpq-raw"),
    ("replicate.pull", "eventlog"), ("replicate.pull", "libpq-raw")]
bindir = "/usr/lib/postgresql/15/bin"
base = "/tmp/eventlog-pg-alt%04d" % random.randint(0, 9999)
port = 40000 + random.randint(0, 19999)
work = base + "-work"
pg = pwd.getpwnam("postgres")
as_pg = ["/usr/sbin/runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []


def server(*args):
    subprocess.run(as_pg + [bindir + "/pg_ctl", "-D", base + "/data"] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


os.mkdir(base, 0o700)
os.chown(base, pg.pw_uid, pg.pw_gid)
os.makedirs(work)
subprocess.run(as_pg + [bindir + "/initdb", "-D", base + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                        "--no-sync"], check=True, stdout=subprocess.DEVNULL)
with open(base + "/data/pg_hba.conf", "w") as hba:
    hba.write("local all postgres trust\nlocal all all scram-sha-256\n")
os.chown(base + "/data/pg_hba.conf", pg.pw_uid, pg.pw_gid)
server("-l", base + "/server.log", "-w", "-t", "60", "-o",
       f"-k {base} -p {port} -c listen_addresses='' -c fsync=off -c full_page_writes=off -c max_connections=60",
       "start")


def child(binary, mode, workload, system, fixture, directory, warmups=0, runs=0):
    request = {"mode": mode, "workload": workload, "system": system, "size": size, "batchSize": 1000, "ids": 7,
               "fixture": fixture, "directory": directory, "warmups": warmups, "runs": runs,
               "server": {"directory": base, "port": port}}
    done = subprocess.run([binary, "--internal-child", json.dumps(request)], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAILED {binary} {mode} {workload} {system} (exit {done.returncode}): {done.stdout[-2000:]} "
              f"{done.stderr[-4000:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


try:
    fixtures = {}
    for name, binary in builds:
        for workload in sorted({w for w, _ in combos}):
            fixture = f"{work}/{name}-{workload}"
            child(binary, "prepare", workload, "eventlog", fixture, f"{work}/prep")
            fixtures[(name, workload)] = fixture
    results = {}
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} UTC start, load {os.getloadavg()}", flush=True)
    for index in range(pairs):
        for workload, system in combos:
            order = builds if index % 2 == 0 else builds[::-1]
            for name, binary in order:
                report = child(binary, "measure", workload, system, fixtures[(name, workload)],
                               f"{work}/run", warmups=1, runs=1)
                if report is None:
                    continue
                external = (report.get("externalCPUSeconds") or [0])[0]
                results.setdefault((workload, system, name), {})[index] = (
                    report["seconds"][0], report["cpuSeconds"][0], external, report["check"])
                print(f"pair {index + 1} {workload} {system} {name}: wall {report['seconds'][0]:.3f} s, "
                      f"cpu {report['cpuSeconds'][0]:.3f} s (server {external:.3f} s)", flush=True)
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} UTC end, load {os.getloadavg()}")
    (a, _), (b, _) = builds
    print(f"\n{b} over {a}: median (min-max) of the pairs; per event: median of each build's runs")
    for workload, system in combos:
        both = sorted(set(results[(workload, system, a)]) & set(results[(workload, system, b)]))
        old = [results[(workload, system, a)][i] for i in both]
        new = [results[(workload, system, b)][i] for i in both]
        print(f"{workload} {system}: {len(both)} pairs")
        for label, column in (("wall", 0), ("cpu", 1), ("server cpu", 2), ("client cpu", None)):
            def value(run):
                return run[1] - run[2] if column is None else run[column]
            ratios = [value(n) / value(o) for o, n in zip(old, new) if value(o) > 0]
            if not ratios:
                continue
            print(f"{workload} {system} {label}: {statistics.median(ratios):.2f}x "
                  f"({min(ratios):.2f}-{max(ratios):.2f}); "
                  f"{a} {statistics.median(value(r) for r in old) / size * 1e6:.1f} us, "
                  f"{b} {statistics.median(value(r) for r in new) / size * 1e6:.1f} us an event")
        checks = {run[3] for run in old} | {run[3] for run in new}
        print(f"  outcomes: {len({run[3] for run in old})} distinct for {a}, {len({run[3] for run in new})} for {b}")
finally:
    server("-m", "fast", "-w", "stop")
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
