import EventLog
import Foundation

/// Turns a local event's payload into the JSON object the server stores, and a pulled JSON
/// payload back into what this log stores, with the store's event types and the layouts its
/// environment recorded (``EventStore/payloadTranscoder()``).
///
/// The server keeps payloads as `jsonb` in the JSON form `export` writes, so that SQL reads a
/// field (`payload->>'customerName'`). Binary to JSON to binary gives the same bytes (the
/// transcoder's guarantee, dates included). A payload this build has no JSON form for at its own
/// schema version (an unknown type without a recorded layout, an older version this build only
/// upcasts) travels as `{"$binary": "<Base64>", "$schemaVersion": n}` and comes back as the same
/// bytes. A pulled JSON payload that neither the event types nor a layout read, whole, is stored
/// as JSON (``PayloadEncoding/json``): one of a type this build does not know is skipped by the
/// projections until a build that reads it opens the log; one with members its type does not
/// read is folded by what the type reads, and keeps every member the server holds.
package struct PayloadConversion: Sendable {
  /// The transcoder: the store's event types and the layouts recorded when it was made.
  package let transcoder: PayloadTranscoder

  /// A conversion with `store`'s event types and recorded layouts.
  package init(store: EventStore) throws { transcoder = try store.payloadTranscoder() }

  /// A conversion with `transcoder`.
  package init(transcoder: PayloadTranscoder) { self.transcoder = transcoder }

  /// What a pulled payload becomes in this log.
  package enum Incoming: Sendable {
    /// The event to store (its payload in binary, or kept as JSON).
    case event(NewEvent)
    /// This build cannot store it, and why.
    case unconvertible(String)
  }

  /// The JSON object the server stores for `event`'s payload.
  package func outgoing(_ event: RecordedEvent) -> [UInt8] {
    let rendered = transcoder.json(of: event)
    guard rendered.schemaVersion == event.schemaVersion else {
      // Upcast to a newer shape: the server keeps the event as it is, in binary.
      return Array(PayloadTranscoder.binaryJSON(of: event))
    }
    return Array(rendered.json)
  }

  /// The event to store for a pulled one: in binary when this build reads all of its payload,
  /// else with its payload kept as JSON, as an `import` stores a line
  /// (``PayloadTranscoder/storedEvent(id:type:schemaVersion:payload:metadata:recordedAt:)``);
  /// unconvertible only when the payload is not JSON this build reads at all.
  package func incoming(_ event: ServerEvent) -> Incoming {
    let node: JSONNode
    do {
      node = try JSONNode.parse(Data(event.payload))
    } catch {
      return .unconvertible("the payload is not JSON: \(error)")
    }
    var stored = transcoder.storedEvent(
      id: event.id, type: event.type, schemaVersion: event.schemaVersion, payload: node,
      metadata: event.metadata, recordedAt: event.recordedAt)
    // The sealed values stay sealed: the record lists whose they are, as the server does.
    stored.subjects = NewEvent.ordered(event.subjects)
    return .event(stored)
  }
}
