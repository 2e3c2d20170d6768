import EventLog
import Foundation
import TestKit

/// `eventlog-stress read-loop`: reads the log continuously while another process appends (and
/// grows the map), checking that it is gap-free and that every record's checksum holds.
struct ReadLoopCommand: StressCommand {
  static let name = "read-loop"
  static let usage =
    "eventlog-stress read-loop --db PATH --until-head N [--map-size BYTES] [--chunk N] [--timeout SECONDS] [--seed N]"
  static let help = """
    Read the log from event 1 on, continuously, until the head reaches --until-head and every event up to
    the head was read. Each pass reads the new events in chunks (every record's CRC-32C is checked on
    read), checks that the sequence is gap-free, re-reads a random older range, and notes the map size.

    Usage: \(usage)

    Options:
      --db PATH          The environment directory (opened read-only; waits up to --timeout for it).
      --until-head N     Stop once N events were read.
      --map-size BYTES   The map size to open with (default 1 MiB); another process's growth is adopted.
      --chunk N          Events per read transaction (default 256).
      --timeout SECONDS  Fail after this long (default 120).
      --seed N           Seed of the random re-reads (default 1).

    Output:
      head <n>                  each time the head seen changes
      map <bytes>               each time the map size this process uses changes
      done <events> <fnv64>     at the end: the events read and the FNV-1a 64 of their
                                (sequence, id, payload), in order
    """
  static let options: [String: Bool] = [
    "db": true, "until-head": true, "map-size": true, "chunk": true, "timeout": true, "seed": true,
  ]

  var path: String
  var untilHead: UInt64
  var mapSize: Int
  var chunk: Int
  var timeout: Int
  var seed: UInt64

  init(_ options: ParsedOptions) throws(UsageError) {
    path = try options.required("db")
    guard options.string("until-head") != nil else { throw UsageError("'--until-head' is required") }
    untilHead = try options.integer("until-head", in: 1...UInt64.max, default: 1)
    mapSize = try options.integer("map-size", in: 64 << 10...1 << 40, default: 1 << 20)
    chunk = try options.integer("chunk", in: 1...1_000_000, default: 256)
    timeout = try options.integer("timeout", in: 1...86_400, default: 120)
    seed = try options.integer("seed", in: 0...UInt64.max, default: 1)
  }

  func run() async throws -> Int32 {
    let deadline = Date().addingTimeInterval(Double(timeout))
    var options = EventStore.Options()
    options.readOnly = true
    options.mapSize = mapSize
    let store = try openStore(path: path, projections: [], options: options, waitUpTo: Double(timeout))
    var random = SplitMix64(seed: seed)
    var digest = FNV1a64()
    var next: UInt64 = 1
    var lastHead: UInt64 = 0
    var lastMapSize = 0
    while true {
      let head = try store.head()
      guard head >= lastHead else { throw StressFailure("the head went back from \(lastHead) to \(head)") }
      if head != lastHead { Output.line("head \(head)") }
      lastHead = head
      while next <= head {
        let events = try store.events(from: next, through: head, limit: chunk)
        guard !events.isEmpty else { throw StressFailure("events \(next)…\(head) are missing") }
        for event in events {
          guard event.sequence == next else {
            throw StressFailure("expected event \(next), read \(event.sequence): a gap")
          }
          digest.add(event.sequence)
          withUnsafeBytes(of: event.id.uuid) { digest.add($0) }
          digest.add(event.payload)
          next += 1
        }
      }
      if next > 1 {
        // An older range again: the pages under it must survive the remap.
        let first = UInt64.random(in: 1..<next, using: &random)
        let expected = min(UInt64(chunk), next - first)
        let events = try store.events(from: first, limit: Int(expected))
        guard events.map(\.sequence) == Array(first..<first + expected) else {
          throw StressFailure("re-reading from \(first) returned \(events.count) events, not \(first)…")
        }
      }
      let mapSize = try store.storageInfo().mapSize
      if mapSize != lastMapSize { Output.line("map \(mapSize)") }
      lastMapSize = mapSize
      if next > untilHead {
        Output.line("done \(next - 1) \(digest.hex)")
        return StressProgram.success
      }
      guard Date() < deadline else {
        throw StressFailure("timed out after \(timeout) s at head \(head), waiting for \(untilHead)")
      }
      usleep(2_000)
    }
  }
}
