import Foundation

/// One revision of an event type's payload layout at one schema version, as an environment
/// records it (its `layouts` database, `Docs/OnDiskFormat.md`) and `export` carries it: the
/// field names and kinds with which any build renders such payloads as JSON and turns that JSON
/// back into the same bytes.
///
/// Revisions are never edited: when a payload holds something its type's latest revision cannot
/// describe (a value in an optional that was always `nil` before, an element in an array that was
/// always empty), the append that stores it records a new revision that describes more. When the
/// type gained an optional field (without a new schema version), the first append of its new
/// layout records that as the next revision: the earlier ones describe the payloads stored
/// before it.
package struct RecordedLayout: Sendable, Hashable {
  /// The event type.
  public var type: String
  /// The payload schema version it lays out.
  public var schemaVersion: UInt16
  /// The revision, from 1.
  public var revision: UInt32
  /// The event whose append recorded this revision (the first the previous one could not
  /// describe); an export carries the revision on that event's line.
  public var sequence: UInt64
  /// The layout.
  package var layout: PayloadLayout

  package init(type: String, schemaVersion: UInt16, revision: UInt32, sequence: UInt64, layout: PayloadLayout)
  {
    self.type = type
    self.schemaVersion = schemaVersion
    self.revision = revision
    self.sequence = sequence
    self.layout = layout
  }

  /// Whether it knows the kind of every field (then it describes every payload of its type).
  public var isComplete: Bool { layout.isComplete }

  /// The revision as an export carries it, under the line's `"layout"` key:
  /// `{"kind": <the layout>, "revision": n}` (keys sorted, no white space).
  public var exportedJSON: Data {
    JSONNode(.object(["kind": layout.node, "revision": JSONNode(.literal(String(revision)))])).rendered
  }

  /// Reads a revision from an export line's `"layout"` value (``exportedJSON``), for the event
  /// of `type` and `schemaVersion` at `sequence` that carries it.
  /// - Throws: `RecordedLayout.FormatError` naming what does not read.
  public init(type: String, schemaVersion: UInt16, sequence: UInt64, exportedJSON: Data) throws {
    let node: JSONNode
    do {
      node = try JSONNode.parse(exportedJSON)
    } catch {
      throw FormatError(reason: "not JSON: \(error)")
    }
    guard case .object(let members) = node.value, members.count == 2, let kind = members["kind"],
      case .literal(let text)? = members["revision"]?.value, let revision = UInt32(text), revision > 0
    else {
      throw FormatError(reason: #"expected {"kind": …, "revision": n} with n from 1"#)
    }
    do {
      self.init(
        type: type, schemaVersion: schemaVersion, revision: revision, sequence: sequence,
        layout: try PayloadLayout(node: kind))
    } catch {
      throw FormatError(reason: "\(error)")
    }
  }

  /// A layout's text that does not read.
  public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What is wrong.
    public var reason: String
    /// `invalid layout: <reason>`.
    public var description: String { "invalid layout: \(reason)" }
    /// The description.
    public var errorDescription: String? { description }
  }
}

/// An event type at one schema version: what a layout is recorded for.
package struct LayoutKey: Hashable, Sendable {
  package var type: String
  package var schemaVersion: UInt16

  package init(type: String, schemaVersion: UInt16) {
    self.type = type
    self.schemaVersion = schemaVersion
  }
}
