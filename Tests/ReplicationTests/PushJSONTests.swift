import EventLog
import Foundation
import Replication
import Testing

@testable import ReplicationPostgres

/// The `p_events` argument of `eventlog.push`, written byte by byte: valid JSON whatever the
/// strings hold, payloads in base64 of every length, IDs in lower case.
@Suite("Push JSON")
struct PushJSONTests {
  @Test func everyFieldSurvivesAJSONParser() throws {
    let strings = ["plain", "quote \" and backslash \\", "new\nline\r\ttab", "\u{01}\u{1f}", "é 🍝 ü", ""]
    var events: [OutgoingEvent] = []
    for (index, text) in strings.enumerated() {
      let payload = (0..<(index * 7 % 5)).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 200) }
      events.append(
        Self.event(
          sequence: UInt64(index + 1), stream: "booking-\(text)", type: "Type\(text)", payload: payload,
          metadata: EventMetadata(
            correlationID: index % 2 == 0 ? UUID() : nil, causationID: index % 3 == 0 ? UUID() : nil,
            origin: text)))
    }
    let json = PostgresTransport.json(events)
    let parsed = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    #expect(parsed.count == events.count)
    for (event, object) in zip(events, parsed) {
      #expect(object["id"] as? String == event.id.uuidString.lowercased())
      #expect((object["seq"] as? NSNumber)?.uint64Value == event.localSequence)
      #expect(object["stream"] as? String == event.stream.rawValue)
      #expect(object["type"] as? String == event.type)
      #expect((object["schemaVersion"] as? NSNumber)?.intValue == Int(event.schemaVersion))
      #expect(object["payload"] as? String == Data(event.payload).base64EncodedString())
      #expect((object["recordedAt"] as? NSNumber)?.int64Value == event.recordedAt.microsecondsSince1970)
      let metadata = try #require(object["metadata"] as? [String: Any])
      #expect(metadata["origin"] as? String == event.metadata.origin)
      #expect(metadata["correlationID"] as? String == event.metadata.correlationID?.uuidString.lowercased())
      #expect(metadata["causationID"] as? String == event.metadata.causationID?.uuidString.lowercased())
    }
    #expect(PostgresTransport.json([]) == "[]")
    #expect(PostgresTransport.quoted("a\"b\\c\u{7}") == #""a\"b\\c\u0007""#)
  }

  @Test(arguments: 0..<8)
  func base64OfEveryRemainder(_ count: Int) {
    let bytes = (0..<(count + 40)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) }
    var out: [UInt8] = []
    PostgresTransport.appendBase64(bytes, to: &out)
    #expect(String(decoding: out, as: UTF8.self) == Data(bytes).base64EncodedString())
  }

  /// A local event as the outbox reads it.
  static func event(
    sequence: UInt64, stream: String, type: String, payload: [UInt8], metadata: EventMetadata
  ) -> OutgoingEvent {
    OutgoingEvent(
      RecordedEvent(
        sequence: sequence, id: UUID(), stream: StreamID(stream), version: 1, type: type, schemaVersion: 3,
        recordedAt: Date(microsecondsSince1970: 1_780_000_000_123_456 + Int64(sequence)), metadata: metadata,
        payload: payload))
  }
}
