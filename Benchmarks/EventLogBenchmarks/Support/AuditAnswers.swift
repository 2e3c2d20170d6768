import Foundation
import TestKit

/// What an `audit.query` run answered, as one outcome line that every system must report alike:
/// the events of the windows and of the device query, the counts per type, and a fingerprint
/// (FNV-1a) of every returned event's sequence, ID, version, type, time (microseconds) and origin
/// (device and sequence there; this environment's own device as one mark, since each system's is
/// its own), in the order returned.
struct AuditAnswers {
  private(set) var windowEvents = 0
  private(set) var deviceEvents = 0
  private var hash = FNV1a64()

  /// A returned event's fields, which differ between systems only in how they are stored.
  struct Event {
    var sequence: UInt64
    var id: UUID
    var version: UInt64
    var type: String
    var recordedAtMicroseconds: Int64
    /// `nil`: this environment's own device.
    var device: UUID?
    var originSequence: UInt64
  }

  /// The answer to one time window.
  mutating func addWindow(_ events: some Sequence<Event>) {
    hash.add("window")
    for event in events {
      windowEvents += 1
      add(event)
    }
  }

  /// The answer to the device query.
  mutating func addDevice(_ events: some Sequence<Event>) {
    hash.add("device")
    for event in events {
      deviceEvents += 1
      add(event)
    }
  }

  private mutating func add(_ event: Event) {
    hash.add(event.sequence)
    withUnsafeBytes(of: event.id.uuid) { hash.add($0) }
    hash.add(event.version)
    hash.add(event.type)
    hash.add(UInt64(bitPattern: event.recordedAtMicroseconds))
    if let device = event.device {
      withUnsafeBytes(of: device.uuid) { hash.add($0) }
    } else {
      hash.add("own")
    }
    hash.add(event.originSequence)
  }

  /// A run that did not answer what the fixture asks.
  struct WrongAnswer: Error, CustomStringConvertible {
    var description: String
  }

  /// The outcome line: `queries=N window=W device=D types=Type:n,… fingerprint=<hex>`.
  /// - Throws: ``WrongAnswer`` when the windows did not return 1% of the log each, the device
  ///   query not the queried device's events, or the counts per type do not add up to the log's
  ///   `size`.
  func outcome(size: Int, counts: [String: UInt64]) throws -> String {
    guard windowEvents == AuditFixture.windowEvents(size: size) else {
      throw WrongAnswer(
        description:
          "the windows returned \(windowEvents) events, not \(AuditFixture.windowEvents(size: size))")
    }
    guard deviceEvents == AuditFixture.deviceEvents(size: size) else {
      throw WrongAnswer(
        description:
          "the device query returned \(deviceEvents) events, not \(AuditFixture.deviceEvents(size: size))")
    }
    let total = counts.values.reduce(0, +)
    guard total == UInt64(size) else {
      throw WrongAnswer(description: "the counts per type add up to \(total) events, not \(size)")
    }
    let types = counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    return "queries=\(AuditFixture.queries) window=\(windowEvents) device=\(deviceEvents) types=\(types) "
      + "fingerprint=\(hash.hex)"
  }
}
