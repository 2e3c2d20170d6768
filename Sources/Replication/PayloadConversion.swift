import EventLog
import Foundation

/// Turns a local event's binary payload into the JSON object the server stores, and a pulled
/// JSON payload back into what this log stores.
///
/// The server keeps payloads as `jsonb` in the JSON form `export` writes, so that SQL reads a
/// field (`payload->>'customerName'`). A payload this build has no lossless JSON form for (an
/// unknown type, an older schema version, a value whose JSON does not give back the same bytes)
/// travels as `{"$binary": "<base64 of the stored bytes>"}`, and comes back as the same bytes.
package struct PayloadConversion: Sendable {
  /// The app's event types.
  package let registry: EventTypeRegistry

  /// A conversion with `registry`'s JSON forms.
  package init(registry: EventTypeRegistry) { self.registry = registry }

  /// What a pulled payload becomes in this log.
  package enum Incoming: Sendable, Hashable {
    /// The binary payload to store.
    case binary([UInt8])
    /// This build cannot store it, and why.
    case unconvertible(String)
  }

  /// The JSON object the server stores for `event`'s payload.
  package func outgoing(_ event: RecordedEvent) -> [UInt8] {
    if registry.schemaVersion(of: event.type) == event.schemaVersion,
      let json = try? registry.json(of: event),
      let back = try? registry.payload(fromJSON: json, type: event.type),
      back.schemaVersion == event.schemaVersion, back.bytes == event.payload
    {
      return Array(json)
    }
    return Self.binaryObject(event.payload)
  }

  /// The payload to store for a pulled event.
  package func incoming(_ event: ServerEvent) -> Incoming {
    if let bytes = Self.binary(inObject: event.payload) { return .binary(bytes) }
    guard registry.schemaVersion(of: event.type) == event.schemaVersion else {
      return .unconvertible(
        "this build has no binary form for '\(event.type)' schema version \(event.schemaVersion) from JSON")
    }
    do {
      return .binary(try registry.payload(fromJSON: Data(event.payload), type: event.type).bytes)
    } catch {
      return .unconvertible("the '\(event.type)' payload does not decode from its JSON: \(error)")
    }
  }

  /// `{"$binary":"<base64>"}`.
  package static func binaryObject(_ bytes: [UInt8]) -> [UInt8] {
    Array(#"{"$binary":""#.utf8) + Array(Data(bytes).base64EncodedString().utf8) + Array(#""}"#.utf8)
  }

  /// The bytes of a `{"$binary": "<base64>"}` object (as this build writes it, or as `jsonb`
  /// prints it back, with a space after the colon), or `nil` for any other JSON.
  package static func binary(inObject json: [UInt8]) -> [UInt8]? {
    for prefix in [#"{"$binary":""#, #"{"$binary": ""#] {
      let head = Array(prefix.utf8)
      guard json.count >= head.count + 2, json.starts(with: head), json.suffix(2).elementsEqual(#""}"#.utf8)
      else { continue }
      let text = json[head.count..<(json.count - 2)]
      guard !text.contains(UInt8(ascii: "\"")), !text.contains(UInt8(ascii: "\\")),
        let data = Data(base64Encoded: Data(text))
      else { return nil }
      return Array(data)
    }
    return nil
  }
}
