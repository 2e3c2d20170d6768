import EventLog
import Foundation
import Sodium

/// The last line of an export: what the file holds and what it can be checked against.
///
/// `{"manifest": {"format", "tool", "exportedAt", "device", "events", "first", "last", "head":
/// {"seq", "chain"}, "selection": {…}, "complete", "damaged": [seq…], "digest"}}`:
/// - `device`: the environment's device ID (whose log it is), `head`: its head when exported and
///   the head's chain value, which the server's attested heads and `eventlog verify` show;
/// - `first`, `last`: the first and last sequence exported; `events`: the event lines;
/// - `selection`: the options that chose the events (`{}` for the whole log); `complete`: the
///   whole log from event 1 (only such an export can be imported); `damaged`: the sequences of
///   records `--salvage` left out;
/// - `digest`: BLAKE2b-256 of every event line before it, each with its newline, as written.
///
/// Each event line carries its record's `"chain"` value, and `"previousChain"` when the record
/// before it is not on the line before (the first line, or after a gap): each line can be checked
/// against the record it came from, alone, and a run of lines as a run of the log
/// (`Docs/Audit.md`).
struct ExportManifest: Sendable, Equatable {
  static let format = 1
  var tool: String
  var exportedAt: Date
  var device: UUID?
  var events: Int
  var first: UInt64?
  var last: UInt64?
  var head: UInt64
  var headChain: ChainValue?
  var selection: [(String, String)]
  var complete: Bool
  var damaged: [UInt64]
  var digest: [UInt8]

  static func == (lhs: ExportManifest, rhs: ExportManifest) -> Bool {
    lhs.rendered == rhs.rendered
  }

  /// The manifest line.
  var rendered: String {
    JSONValue.object([
      (
        "manifest",
        .object([
          ("format", .int(Int64(Self.format))), ("tool", .string(tool)),
          ("exportedAt", .string(ISO8601.string(from: exportedAt))),
          ("device", device.map { .string($0.lowercasedString) } ?? .null), ("events", .int(Int64(events))),
          ("first", first.map(JSONValue.uint) ?? .null), ("last", last.map(JSONValue.uint) ?? .null),
          ("head", .object([("seq", .uint(head)), ("chain", headChain.map { .string($0.hex) } ?? .null)])),
          ("selection", .object(selection.map { ($0.0, JSONValue.string($0.1)) })),
          ("complete", .bool(complete)),
          ("damaged", .array(damaged.map(JSONValue.uint))), ("digest", .string(Hex.string(digest))),
        ])
      )
    ]).rendered()
  }

  /// The manifest of a parsed line, or `nil` when the line is not one.
  /// - Throws: ``CommandFailure`` naming the line and the field for a manifest that does not read.
  static func parse(_ node: JSONNode, line lineNumber: Int) throws -> ExportManifest? {
    guard let outer = node.members, let inner = outer["manifest"] else { return nil }
    func fail(_ message: String) -> CommandFailure {
      CommandFailure("line \(lineNumber) (the manifest): \(message)")
    }
    guard outer.count == 1, let fields = inner.members else { throw fail("not a JSON object") }
    func string(_ name: String) throws -> String {
      guard let text = fields[name]?.string else { throw fail("field '\(name)' is missing or not a string") }
      return text
    }
    func number(_ name: String) throws -> UInt64? {
      guard let value = fields[name], !value.isNull else { return nil }
      guard let digits = value.integerText, let number = UInt64(digits) else {
        throw fail("field '\(name)' is not a whole number")
      }
      return number
    }
    guard fields["format"]?.integerText == String(format) else {
      throw fail("format \(fields["format"]?.integerText ?? "?") is not one this build reads (\(format))")
    }
    guard let exportedAt = ISO8601.date(from: try string("exportedAt")) else {
      throw fail("field 'exportedAt' is not an ISO 8601 time")
    }
    var device: UUID?
    if let value = fields["device"], !value.isNull {
      guard let text = value.string, let id = UUID(uuidString: text) else {
        throw fail("field 'device' is not a UUID")
      }
      device = id
    }
    guard let head = fields["head"]?.members, let headSeq = head["seq"]?.integerText.flatMap({ UInt64($0) })
    else {
      throw fail("field 'head' must be {\"seq\", \"chain\"}")
    }
    var headChain: ChainValue?
    if let value = head["chain"], !value.isNull {
      guard let text = value.string, let chain = ChainValue(hex: text) else {
        throw fail("field 'head.chain' is not 64 hexadecimal digits")
      }
      headChain = chain
    }
    guard let selection = fields["selection"]?.members else {
      throw fail("field 'selection' is not an object")
    }
    guard let complete = fields["complete"]?.bool else { throw fail("field 'complete' is not true or false") }
    guard let damaged = fields["damaged"]?.items else { throw fail("field 'damaged' is not an array") }
    guard let digest = Hex.bytes(try string("digest")), digest.count == BLAKE2b256.length else {
      throw fail("field 'digest' is not 64 hexadecimal digits")
    }
    guard let events = try number("events") else { throw fail("field 'events' is missing") }
    return ExportManifest(
      tool: try string("tool"), exportedAt: exportedAt, device: device, events: Int(events),
      first: try number("first"), last: try number("last"), head: headSeq, headChain: headChain,
      selection: selection.keys.sorted().map { ($0, selection[$0]?.string ?? "") }, complete: complete,
      damaged: try damaged.map { element in
        guard let digits = element.integerText, let value = UInt64(digits) else {
          throw fail("field 'damaged' holds something other than sequence numbers")
        }
        return value
      }, digest: digest)
  }
}
