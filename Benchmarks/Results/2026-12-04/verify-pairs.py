#!/usr/bin/env python3
"""`eventlog verify --json` of two builds, each on the 1M-event replay fixture its own
eventlog-benchmarks build prepared (an environment opened by the benchmark as `eventlog` opens
one: `AppSchema.restaurantBooking`), timed with `/usr/bin/time -v`, in alternating pairs (A B,
then B A, ...). The whole command is timed: process start, the read-only open, and `verify`
(every record's checksum, and in B its chain value; the sequence, stream versions and indexes,
each event against the domain's rules, the projections against a replay).

usage: verify-pairs.py PAIRS EVENTLOG_A FIXTURE_A EVENTLOG_B FIXTURE_B
  Prints each run's wall, user and system seconds and peak RSS, verify's verdict (ok, events,
  the chain head in B), the events per wall second and per CPU second, then the medians.
"""
import json, os, re, statistics, subprocess, sys, time

pairs = int(sys.argv[1])
builds = {"A": (sys.argv[2], sys.argv[3]), "B": (sys.argv[4], sys.argv[5])}


def timed(name):
    binary, fixture = builds[name]
    command = ["/usr/bin/time", "-v", binary, "--db", fixture, "verify", "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{name}: {' '.join(command)} exited {done.returncode}: {done.stdout[-400:]} {done.stderr[-800:]}")
    fields = dict(line.strip().split(": ", 1) for line in done.stderr.splitlines() if ": " in line)
    wall_text = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"]
    parts = [float(p) for p in wall_text.split(":")]
    wall = sum(p * 60 ** (len(parts) - 1 - i) for i, p in enumerate(parts))
    user, system = float(fields["User time (seconds)"]), float(fields["System time (seconds)"])
    rss = int(fields["Maximum resident set size (kbytes)"])
    verdict = json.loads(done.stdout)
    return wall, user + system, user, system, rss, verdict


print(f"# eventlog verify --json, {pairs} pairs; A = {builds['A']}, B = {builds['B']};"
      f" started {time.strftime('%H:%M:%S', time.gmtime())} UTC", flush=True)
rates = {"A": [], "B": []}
cpu_rates = {"A": [], "B": []}
ratios, wall_ratios, loads = [], [], []
for i in range(pairs):
    order = ("A", "B") if i % 2 == 0 else ("B", "A")
    load = os.getloadavg()[0]
    loads.append(load)
    result = {name: timed(name) for name in order}
    for name in order:
        wall, cpu, user, system, rss, verdict = result[name]
        events = verdict["events"]
        if not verdict["ok"]:
            sys.exit(f"{name}: verify found problems: {verdict['problems'][:3]}")
        rates[name].append(events / wall)
        cpu_rates[name].append(events / cpu)
        chain = verdict.get("chain")
        print(f"pair {i + 1} ({order[0]} first, load {load:.2f}) {name}: wall {wall:.2f} s, user {user:.2f} s,"
              f" sys {system:.2f} s, max RSS {rss // 1024} MiB; ok={verdict['ok']} events={events}"
              f" chain={json.dumps(chain)}; {events / wall / 1e3:.0f} k events/s, {events / cpu / 1e3:.0f} k per CPU s",
              flush=True)
    ratios.append(result["B"][1] / result["A"][1])
    wall_ratios.append(result["B"][0] / result["A"][0])
for name in ("A", "B"):
    print(f"{name}: median {statistics.median(rates[name]) / 1e3:.0f} k events/s"
          f" ({min(rates[name]) / 1e3:.0f}-{max(rates[name]) / 1e3:.0f}),"
          f" {statistics.median(cpu_rates[name]) / 1e3:.0f} k events per CPU second"
          f" ({min(cpu_rates[name]) / 1e3:.0f}-{max(cpu_rates[name]) / 1e3:.0f})")
print(f"verify @ 1M, {pairs} pairs: CPU B/A median {statistics.median(ratios):.3f}"
      f" ({min(ratios):.3f}-{max(ratios):.3f}), wall median {statistics.median(wall_ratios):.3f}"
      f" ({min(wall_ratios):.3f}-{max(wall_ratios):.3f}); load average (1 min) {min(loads):.2f}-{max(loads):.2f};"
      f" ended {time.strftime('%H:%M:%S', time.gmtime())} UTC")
