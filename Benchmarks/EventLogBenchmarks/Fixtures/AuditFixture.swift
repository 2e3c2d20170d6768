import Foundation

/// The `audit.query` log and the auditor's questions: N mixed events (``MixedEventGenerator``'s,
/// as `replay` replays) recorded one minute apart, in blocks of ``blockSize`` consecutive events
/// from one device: about half this environment's own, the rest pulled from three other devices,
/// each event with its sequence on the device that recorded it.
///
/// One run asks ``windowCount`` time windows of 1% of the log each (spread over it), reading
/// their events in full; every event of the first other device, read in full; and the count of
/// events per type: ``queries`` queries.
enum AuditFixture {
  /// The other devices whose events the log holds (pulled, with their provenance).
  static let devices = [
    UUID(uuid: (0xA0, 0xD1, 0x70, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1)),
    UUID(uuid: (0xA0, 0xD1, 0x70, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 2)),
    UUID(uuid: (0xA0, 0xD1, 0x70, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 3)),
  ]
  /// The device whose events the device query reads (``devices``' first).
  static let queriedDevice = 0
  /// Consecutive events from one device: a push batch of the device that recorded them, or a
  /// session of this device's own appends.
  static let blockSize = 500
  /// The first event's time: 2026-01-01T00:00:00Z; each next one ``step`` seconds later.
  static let start: Int64 = 1_767_225_600
  static let step: Int64 = 60
  static let windowCount = 10
  /// The queries of one run: the windows, the device, the counts per type.
  static let queries = windowCount + 2

  /// One event of the log: its record, its time, and where it comes from (`nil`: this
  /// environment's own device, whose sequence there is its sequence in the log) with its
  /// sequence there.
  struct Event {
    var record: MixedEventRecord
    var recordedAt: Date
    var device: UUID?
    var originSequence: UInt64
  }

  /// Consecutive events that one fixture commit stores: this device's own (appended) or pulled
  /// from others (ingested with their provenance).
  struct Commit {
    var pulled: Bool
    var events: [Event]
  }

  /// Which device each block comes from, in order: an index into ``devices``, or `nil` for this
  /// environment's own (half the blocks).
  private struct Origins {
    private var rng = SplitMix64(seed: Fixtures.seed ^ 0xA0D1)

    mutating func next() -> Int? {
      let roll = rng.below(2 * AuditFixture.devices.count)
      return roll < AuditFixture.devices.count ? roll : nil
    }
  }

  /// The log of `size` events in commits of whole blocks from one side (own or pulled), at most
  /// `limit` events each (at least one block), so that a fixture is stored in about `size / 1000`
  /// transactions whatever `limit` allows beyond that. The same events in every process.
  struct Log {
    let size: Int
    let limit: Int
    private var generator = MixedEventGenerator()
    private var origins = Origins()
    private var originSequences = [UInt64](repeating: 0, count: AuditFixture.devices.count)
    private var index = 0
    /// The origin of the next block, drawn while the commit before it was assembled.
    private var drawn: Int??

    init(size: Int, limit: Int) {
      self.size = size
      self.limit = limit
    }

    /// The next commit, or `nil` after the log's last event.
    mutating func next() -> Commit? {
      guard index < size else { return nil }
      let first = drawn ?? origins.next()
      drawn = nil
      var events: [Event] = []
      appendBlock(from: first, to: &events)
      while index < size && events.count + AuditFixture.blockSize <= limit {
        let origin = origins.next()
        if (origin == nil) != (first == nil) {
          drawn = origin
          break
        }
        appendBlock(from: origin, to: &events)
      }
      return Commit(pulled: first != nil, events: events)
    }

    private mutating func appendBlock(from origin: Int?, to events: inout [Event]) {
      let count = min(AuditFixture.blockSize, size - index)
      for record in generator.next(count) {
        var sequence = UInt64(index + 1)
        if let origin {
          originSequences[origin] += 1
          sequence = originSequences[origin]
        }
        events.append(
          Event(
            record: record, recordedAt: AuditFixture.date(index),
            device: origin.map { AuditFixture.devices[$0] },
            originSequence: sequence))
        index += 1
      }
    }
  }

  /// The time of the event at `index` (from 0).
  static func date(_ index: Int) -> Date {
    Date(timeIntervalSince1970: TimeInterval(start + Int64(index) * step))
  }

  /// The windows of a log of `size` (both ends included), ``windowCount`` of them, each as long as
  /// 1% of the log's events (at least one), from its first event to its last.
  static func windows(size: Int) -> [(from: Date, through: Date)] {
    let length = max(1, size / 100)
    return (0..<windowCount).map { k in
      let first = k * (size - length) / max(1, windowCount - 1)
      return (date(first), date(first + length - 1))
    }
  }

  /// The events each run's windows return, all windows together.
  static func windowEvents(size: Int) -> Int { windowCount * min(size, max(1, size / 100)) }

  /// The events of ``queriedDevice`` in a log of `size` (from the blocks' origins alone, without
  /// generating the events).
  static func deviceEvents(size: Int) -> Int {
    var origins = Origins()
    var count = 0
    for first in stride(from: 0, to: size, by: blockSize) where origins.next() == queriedDevice {
      count += min(blockSize, size - first)
    }
    return count
  }

  /// The events one run returns (its operations): the windows' and the device query's.
  static func returnedEvents(size: Int) -> Int { windowEvents(size: size) + deviceEvents(size: size) }
}
