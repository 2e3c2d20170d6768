import Foundation

/// How a layout a build's type has (``PayloadLayout/init(probing:)``) stands to one its
/// environment recorded: what an open decides by (`Docs/OnDiskFormat.md`, "Evolving a type").
package struct LayoutEvolution: Sendable {
  /// A field this build cannot read the recorded bytes into: a field of another kind, a
  /// non-optional field the recorded layout lacks, a non-optional field recorded that the
  /// type lost. `nil` when the recorded bytes decode.
  package var incompatibility: (field: String, reason: String)? {
    incompatibleField.map { ($0, incompatibleReason) }
  }
  private var incompatibleField: String?
  private var incompatibleReason = ""
  /// Optional fields recorded that the type does not have (a newer build's): this build reads
  /// around them and must not write.
  package private(set) var unknownFields: [String] = []
  /// Optional fields of the type that the recorded layout lacks: they read as `nil`.
  package private(set) var addedFields: [String] = []
  /// Fields recorded as `String` that the type reads as `Data` (a field that became
  /// EventLog's `Personal`): the same bytes, read as the value stored in clear.
  package private(set) var sealedFields: [String] = []

  /// Whether the two describe the same bytes (unknown kinds aside).
  package var isSame: Bool {
    incompatibleField == nil && unknownFields.isEmpty && addedFields.isEmpty && sealedFields.isEmpty
  }

  /// Compares the `recorded` layout with `current`, this build's.
  package init(from recorded: PayloadLayout, to current: PayloadLayout) {
    compare(recorded.root, current.root, path: "")
  }

  private static func join(_ path: String, _ name: String) -> String {
    path.isEmpty ? name : path + "." + name
  }

  private mutating func incompatible(_ path: String, _ reason: String) {
    if incompatibleField == nil {
      incompatibleField = path.isEmpty ? "(the payload)" : path
      incompatibleReason = reason
    }
  }

  private mutating func compare(_ old: PayloadLayout.Kind, _ new: PayloadLayout.Kind, path: String) {
    switch (old, new) {
    case (.unknown, _), (_, .unknown):
      return
    case (.optional(let a), .optional(let b)), (.array(let a), .array(let b)):
      compare(a, b, path: path)
    case (.string, .data), (.string, .personal):
      // A varint length and the bytes, both: text stored in clear reads as a personal value's.
      sealedFields.append(path)
    case (.data, .personal):
      // A personal field recorded before personal values had a kind of their own: the same
      // bytes, and the same field.
      return
    case (.structure(let oldFields), .structure(let newFields)):
      for field in newFields {
        let fieldPath = Self.join(path, field.name)
        if let recorded = oldFields.first(where: { $0.name == field.name }) {
          compare(recorded.kind, field.kind, path: fieldPath)
        } else if case .optional = field.kind {
          addedFields.append(fieldPath)
        } else {
          incompatible(fieldPath, "is a new field that is not optional, which the stored values lack")
        }
      }
      for field in oldFields where !newFields.contains(where: { $0.name == field.name }) {
        let fieldPath = Self.join(path, field.name)
        if case .optional = field.kind {
          unknownFields.append(fieldPath)
        } else {
          incompatible(fieldPath, "is stored (not optional) but the type no longer has it")
        }
      }
    default:
      if old != new {
        incompatible(path, "is stored as \(old.summary) but the type reads \(new.summary)")
      }
    }
  }
}

extension PayloadLayout.Kind {
  /// The kind in a few words, for errors: `string`, `optional string`, `array of int`, `struct`.
  var summary: String {
    if let name = scalarName { return name }
    switch self {
    case .unknown: return "unknown"
    case .optional(let inner): return "optional \(inner.summary)"
    case .array(let inner): return "array of \(inner.summary)"
    case .structure: return "struct"
    default: return "?"
    }
  }
}

extension PayloadLayout {
  /// `payload`, written in the layout `recorded`, rewritten in this layout: fields by name, an
  /// optional field `recorded` lacks as `nil`, a field this layout lacks left out. `nil` when
  /// `recorded` does not describe the payload.
  package func transcoding(_ payload: UnsafeRawBufferPointer, from recorded: PayloadLayout) -> [UInt8]? {
    var cursor = BinaryCursor(buffer: payload)
    var output: [UInt8] = []
    output.reserveCapacity(payload.count + 8)
    do {
      try root.transcode(&cursor, from: recorded.root, into: &output)
      return cursor.offset == payload.count ? output : nil
    } catch {
      return nil
    }
  }
}

extension PayloadLayout.Kind {
  /// Reads a value of kind `old` at `cursor` and writes it as this kind.
  fileprivate func transcode(_ cursor: inout BinaryCursor, from old: Self, into output: inout [UInt8]) throws
  {
    switch (old, self) {
    case (.optional(let a), .optional(let b)):
      let present = try cursor.readPresence("Optional")
      output.append(present ? 1 : 0)
      if present { try b.transcode(&cursor, from: a, into: &output) }
    case (.array(let a), .array(let b)):
      let count = try cursor.readElementCount()
      withUnsafeBytes(of: UInt32(count).littleEndian) { output.append(contentsOf: $0) }
      for _ in 0..<count { try b.transcode(&cursor, from: a, into: &output) }
    case (.structure(let oldFields), .structure(let newFields)):
      // Where each recorded field's bytes are.
      var ranges: [String: Range<Int>] = [:]
      for field in oldFields {
        let start = cursor.offset
        try field.kind.skip(&cursor)
        ranges[field.name] = start..<cursor.offset
      }
      for field in newFields {
        guard let range = ranges[field.name], let recorded = oldFields.first(where: { $0.name == field.name })
        else {
          guard case .optional = field.kind else {
            throw PayloadTranscodingError("'\(field.name)' is missing")
          }
          output.append(0)
          continue
        }
        var inner = BinaryCursor(buffer: UnsafeRawBufferPointer(rebasing: cursor.buffer[..<range.upperBound]))
        inner.offset = range.lowerBound
        try field.kind.transcode(&inner, from: recorded.kind, into: &output)
      }
    case (_, .unknown), (.unknown, _):
      // The recorded kind says how long the value is; it has nothing to rewrite.
      let start = cursor.offset
      try old.skip(&cursor)
      output.append(contentsOf: cursor.buffer[start..<cursor.offset])
    case (.string, .data), (.string, .personal), (.data, .personal):
      let start = cursor.offset
      try old.skip(&cursor)
      output.append(contentsOf: cursor.buffer[start..<cursor.offset])
    default:
      guard old == self else { throw PayloadTranscodingError("a \(old.summary) is not a \(summary)") }
      let start = cursor.offset
      try old.skip(&cursor)
      output.append(contentsOf: cursor.buffer[start..<cursor.offset])
    }
  }
}
