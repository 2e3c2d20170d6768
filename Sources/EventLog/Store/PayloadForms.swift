import Foundation
import LMDB

/// What a store knows to turn a JSON payload into binary: its event types
/// (``EventStore/appSchema``'s ``AppSchema/eventTypes``) and the layouts its environment recorded. The projections
/// and the admission are only handed binary payloads: every fold, ingest, readmission and
/// verification converts a stored JSON payload here first.
struct PayloadForms: Sendable {
  let eventTypes: EventTypeRegistry
  /// The store's cache of committed revisions (``LayoutRecorder`` keeps it).
  let cache: LayoutCache
  let layouts: Database?

  /// The latest layout of `key`, read in `txn`. (Not from or into the cache: `txn` may be a
  /// write transaction that wrote a revision, and may yet abort.)
  func latestLayout(_ key: LayoutKey, in txn: Transaction) throws -> RecordedLayout? {
    guard let layouts else { return nil }
    return try LayoutDatabase.latest(key, in: txn, database: layouts)
  }

  /// `event` with a binary payload: as it is when it has one; for a JSON payload, encoded by the
  /// registered type at the event's schema version, else by the recorded layout of that version,
  /// else decoded by the registered type's upcaster and encoded at its current version.
  /// - Returns: `nil` for a JSON payload that nothing here reads; the reason is in `reason`.
  func binaryForm(of event: RecordedEvent, in txn: Transaction) -> (event: RecordedEvent?, reason: String) {
    guard event.payloadEncoding == .json else { return (event, "") }
    var converted = event
    converted.payloadEncoding = .binary
    do {
      let layout = try latestLayout(LayoutKey(type: event.type, schemaVersion: event.schemaVersion), in: txn)
      // The fold reads what the type reads; members it does not read stay in the stored JSON.
      if let binary = try PayloadTranscoder.binary(
        fromJSON: Data(event.payload), type: event.type, schemaVersion: event.schemaVersion,
        eventTypes: eventTypes, layout: layout)
      {
        converted.payload = binary.bytes
        return (converted, "")
      }
      if let (version, bytes, _) = try eventTypes.binaryPayload(of: event) {
        converted.schemaVersion = version
        converted.payload = bytes
        return (converted, "")
      }
    } catch {
      return (
        nil, "its JSON payload does not read as '\(event.type)' (schema \(event.schemaVersion)): \(error)"
      )
    }
    return (
      nil,
      "its payload is JSON, and this build has neither the type '\(event.type)' (schema \(event.schemaVersion)) nor a recorded layout of it"
    )
  }

  /// The verdict on `event` (as it is stored, in `txn`): a JSON payload that does not convert is
  /// unreadable; otherwise `admission`'s verdict on the binary form (admitted without one).
  /// - Returns: the verdict, and the event to fold when it is admitted.
  func verdict(
    on event: RecordedEvent, admission: (any EventAdmission)?, in txn: Transaction
  ) -> (verdict: EventVerdict, folded: RecordedEvent?) {
    let (binary, reason) = binaryForm(of: event, in: txn)
    guard let binary else { return (.unreadable(reason: reason), nil) }
    let verdict = admission?.verdict(for: binary) ?? .admitted
    return (verdict, verdict.isAdmitted ? binary : nil)
  }
}
