import EventLog
import Foundation
import Replication
import Testing

/// The `p_events` argument of `eventlog_api.push`, written byte by byte: valid JSON whatever the
/// strings hold, payloads as their JSON objects, IDs in lower case.
@Suite("Push JSON")
struct PushJSONTests {
  @Test func everyFieldSurvivesAJSONParser() throws {
    let strings = ["plain", "quote \" and backslash \\", "new\nline\r\ttab", "\u{01}\u{1f}", "é 🍝 ü", ""]
    var events: [OutgoingEvent] = []
    for (index, text) in strings.enumerated() {
      var payload: [UInt8] = []
      JSONWriter.appendQuoted(text, to: &payload)
      events.append(
        Self.event(
          sequence: UInt64(index + 1), stream: "booking-\(text)", type: "Type\(text)",
          payload: Array(#"{"text":"#.utf8) + payload + Array("}".utf8),
          metadata: EventMetadata(
            correlationID: index % 2 == 0 ? UUID() : nil, causationID: index % 3 == 0 ? UUID() : nil,
            origin: text)))
    }
    let json = ReplicationWire.events(events)
    let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]])
    #expect(parsed.count == events.count)
    for ((event, object), text) in zip(zip(events, parsed), strings) {
      #expect(object["id"] as? String == event.id.uuidString.lowercased())
      #expect((object["seq"] as? NSNumber)?.uint64Value == event.localSequence)
      #expect(object["stream"] as? String == event.stream.rawValue)
      #expect(object["type"] as? String == event.type)
      #expect((object["schemaVersion"] as? NSNumber)?.intValue == Int(event.schemaVersion))
      #expect((object["payload"] as? [String: Any])?["text"] as? String == text)
      #expect((object["recordedAt"] as? NSNumber)?.int64Value == event.recordedAt.microsecondsSince1970)
      let metadata = try #require(object["metadata"] as? [String: Any])
      #expect(metadata["origin"] as? String == event.metadata.origin)
      #expect(metadata["correlationID"] as? String == event.metadata.correlationID?.uuidString.lowercased())
      #expect(metadata["causationID"] as? String == event.metadata.causationID?.uuidString.lowercased())
    }
    #expect(ReplicationWire.events([]) == Array("[]".utf8))
    var quoted: [UInt8] = []
    JSONWriter.appendQuoted("a\"b\\c\u{7}", to: &quoted)
    #expect(String(decoding: quoted, as: UTF8.self) == #""a\"b\\c\u0007""#)
  }

  /// A local event as the outbox reads it.
  static func event(
    sequence: UInt64, stream: String, type: String, payload: [UInt8], metadata: EventMetadata
  ) -> OutgoingEvent {
    OutgoingEvent(
      RecordedEvent(
        sequence: sequence, id: UUID(), stream: StreamID(stream), version: 1, type: type, schemaVersion: 3,
        recordedAt: Date(microsecondsSince1970: 1_780_000_000_123_456 + Int64(sequence)), metadata: metadata,
        payload: []),
      payload: payload)
  }
}
