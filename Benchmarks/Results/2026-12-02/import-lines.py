#!/usr/bin/env python3
"""The import file of json-reader-import-farm.txt: an export whose last line is a BookingCreated,
repeated 20,000 times with new IDs, names and increasing recordedAt (the layout on the first only).

  eventlog --db one restaurants sync --from Docs/Examples/supabase-restaurants.json
  eventlog --db one bookings create --restaurant "Bangkok Bites" --date 2026-12-24T19:30:00Z \
      --party 4 --name "Ada Lovelace" --notes "window seat"
  eventlog --db one export > one.jsonl
  python3 import-lines.py one.jsonl big.jsonl
  farm-bench -n 8 --timeout 600 --vs "sh -c 'rm -rf b && exec BASE/eventlog --db b import big.jsonl'" \
      -- sh -c 'rm -rf h && exec HEAD/eventlog --db h import big.jsonl'
"""
import json
import sys
import uuid

lines = open(sys.argv[1]).read().splitlines()
out = lines[:-1]
for i in range(20000):
    event = json.loads(lines[-1])
    if i > 0:
        event.pop("layout", None)
    booking = str(uuid.uuid4())
    event.update(seq=len(lines) + i, id=str(uuid.uuid4()), stream="booking-" + booking)
    event["payload"].update(bookingID=booking, customerName="Customer %d" % i, partySize=i % 8 + 1)
    event["recordedAt"] = "2026-12-02T02:20:%02d.%06dZ" % (i // 1000 % 60, i)
    out.append(json.dumps(event, separators=(",", ":")))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
