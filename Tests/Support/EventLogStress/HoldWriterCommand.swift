import EventLog
import Foundation
import RestaurantBooking

/// `eventlog-stress hold-writer`: begins a write transaction and sleeps in it until killed, so
/// that other processes wait for LMDB's writer lock (a test stops it with SIGSTOP, as a user
/// might with Ctrl-Z).
struct HoldWriterCommand: StressCommand {
  static let name = "hold-writer"
  static let usage = "eventlog-stress hold-writer --db PATH"
  static let help = """
    Open the store (the domain's projections and one that holds), append one event, print
    `holding <head>` from inside the append's write transaction and sleep there until killed.

    Usage: \(usage)
    """
  static let options: [String: Bool] = ["db": true]

  var path: String

  init(_ options: ParsedOptions) throws(UsageError) {
    path = try options.required("db")
  }

  func run() async throws -> Int32 {
    let projections: [any Projection] = RestaurantBookingSchema.projections + [HoldingProjection()]
    let store = try openStore(path: path, projections: projections, options: EventStore.Options())
    let event = NewEvent(
      id: UUID(), type: HoldingProjection.eventType, schemaVersion: 1, payload: [],
      metadata: EventMetadata(origin: "eventlog-stress"))
    _ = try await store.append([event], to: "hold-writer", expectedVersion: .any)
    return StressProgram.failure  // not reached: the append never commits
  }
}

/// Sleeps in `apply` on the event `hold-writer` appends, inside the write transaction.
struct HoldingProjection: Projection {
  static let eventType = "HoldWriteLock"
  let name = "hold-writer"
  let version: UInt32 = 1
  let tables = ["held"]

  func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
    guard event.type == Self.eventType else { return }
    Output.line("holding \(event.sequence - 1)")
    while true { sleep(3_600) }
  }
}
