import Foundation

/// The field layout of a binary payload: the names and kinds of its fields, recursively, in the
/// order `BinaryEncoder` writes them. With it, a payload's bytes render as the JSON its type
/// would render (EventLog's `EventTypeRegistry.json(of:)`), and that JSON turns back into the same bytes,
/// without the type's code.
///
/// A layout is learned from values (``init(observing:)``): a field that is an optional holding
/// `nil` of a type whose shape is only known from a value (a struct, a raw-value enum), or an
/// array that is empty, leaves its inner kind ``Kind/unknown``. Such a layout describes every
/// payload that holds nothing there (``describes(_:)``); a payload that holds something needs a
/// layout that knows more, which ``merged(with:)`` makes.
///
/// Its text (``jsonText``) is the form stored in an environment's `layouts` database and carried
/// by `export` (`Docs/OnDiskFormat.md`): a kind is `null` (unknown), a scalar's name (`"bool"`,
/// `"int"`…`"int64"`, `"uint"`…`"uint64"`, `"float"`, `"double"`, `"string"`, `"data"`,
/// `"bytes"`, `"uuid"`, `"date"`, `"personal"`), `{"optional": kind}`, `{"array": kind}` or
/// `{"fields": [{"name": …, "kind": …}, …]}` (a field with `"null": true` renders a `nil` as
/// `null` instead of leaving its key out).
package struct PayloadLayout: Sendable, Hashable {
  /// What one value is.
  package indirect enum Kind: Sendable, Hashable {
    /// Not known yet: no value was seen there.
    case unknown
    case bool
    case int, int8, int16, int32, int64
    case uint, uint8, uint16, uint32, uint64
    case float, double
    case string
    /// `Data`: a varint length and the bytes; Base64 in JSON.
    case data
    /// `[UInt8]`: a varint length and the bytes; an array of numbers in JSON.
    case bytes
    /// EventLog's `Personal`: a varint length and the stored bytes, as `Data`; in JSON, a sealed value's
    /// bytes in Base64 and a value stored in clear (before sealing existed) as its text, as
    /// `Personal`'s own `Codable` writes them.
    case personal
    case uuid
    case date
    /// A presence tag, then the value.
    case optional(Kind)
    /// A 4-byte element count, then the elements.
    case array(Kind)
    /// The fields one after the other, without keys; a JSON object.
    case structure([Field])
  }

  /// One field of a ``Kind/structure``.
  package struct Field: Sendable, Hashable {
    /// The key (the coding key's string value).
    package var name: String
    package var kind: Kind
    /// For an optional: whether `nil` is rendered as `"name": null` (the type encodes it with
    /// `encodeNil` or `encode(_:forKey:)` of an optional) rather than by leaving the key out
    /// (`encodeIfPresent`, what synthesized `Codable` does).
    package var nullWhenAbsent: Bool

    package init(name: String, kind: Kind, nullWhenAbsent: Bool = false) {
      self.name = name
      self.kind = kind
      self.nullWhenAbsent = nullWhenAbsent
    }
  }

  /// The payload's own kind (a ``Kind/structure`` for a struct).
  package var root: Kind

  package init(root: Kind) { self.root = root }

  /// Whether no kind in it is ``Kind/unknown``: it describes every payload of its type.
  package var isComplete: Bool { root.isComplete }

  /// The layout that knows what either knows, or `nil` when the two disagree (different fields,
  /// kinds or order: they are not one type's layouts).
  package func merged(with other: PayloadLayout) -> PayloadLayout? {
    root.merged(with: other.root).map(PayloadLayout.init(root:))
  }
}

extension PayloadLayout.Kind {
  var isComplete: Bool {
    switch self {
    case .unknown: false
    case .optional(let inner), .array(let inner): inner.isComplete
    case .structure(let fields): fields.allSatisfy { $0.kind.isComplete }
    default: true
    }
  }

  func merged(with other: Self) -> Self? {
    switch (self, other) {
    case (.unknown, _): return other
    case (_, .unknown): return self
    case (.optional(let a), .optional(let b)): return a.merged(with: b).map(Self.optional)
    case (.array(let a), .array(let b)): return a.merged(with: b).map(Self.array)
    case (.data, .personal), (.personal, .data):
      // The same bytes: a layout recorded before personal values had a kind of their own
      // (`data`) becomes theirs when it is merged with one that knows it.
      return .personal
    case (.structure(let a), .structure(let b)):
      guard a.count == b.count else { return nil }
      var fields: [PayloadLayout.Field] = []
      fields.reserveCapacity(a.count)
      for (x, y) in zip(a, b) {
        guard x.name == y.name, x.nullWhenAbsent == y.nullWhenAbsent, let kind = x.kind.merged(with: y.kind)
        else { return nil }
        fields.append(PayloadLayout.Field(name: x.name, kind: kind, nullWhenAbsent: x.nullWhenAbsent))
      }
      return .structure(fields)
    default:
      return self == other ? self : nil
    }
  }

  /// The scalar kinds by their names in the layout's text.
  static let scalars: [String: Self] = [
    "bool": .bool, "int": .int, "int8": .int8, "int16": .int16, "int32": .int32, "int64": .int64,
    "uint": .uint, "uint8": .uint8, "uint16": .uint16, "uint32": .uint32, "uint64": .uint64,
    "float": .float, "double": .double, "string": .string, "data": .data, "bytes": .bytes,
    "uuid": .uuid, "date": .date, "personal": .personal,
  ]

  /// The name of a scalar kind, `nil` for the others.
  var scalarName: String? {
    switch self {
    case .bool: "bool"
    case .int: "int"
    case .int8: "int8"
    case .int16: "int16"
    case .int32: "int32"
    case .int64: "int64"
    case .uint: "uint"
    case .uint8: "uint8"
    case .uint16: "uint16"
    case .uint32: "uint32"
    case .uint64: "uint64"
    case .float: "float"
    case .double: "double"
    case .string: "string"
    case .data: "data"
    case .bytes: "bytes"
    case .uuid: "uuid"
    case .date: "date"
    case .personal: "personal"
    case .unknown, .optional, .array, .structure: nil
    }
  }
}

// MARK: - Text

/// Why a layout's text does not read.
package struct PayloadLayoutError: Error, Sendable, Hashable, CustomStringConvertible {
  package var description: String
  package init(_ description: String) { self.description = description }
}

extension PayloadLayout {
  /// The layout's canonical JSON text (keys sorted, no white space).
  package var jsonText: Data { root.node.rendered }

  /// Reads a layout's text (``jsonText``).
  /// - Throws: ``PayloadLayoutError`` naming what does not read, or `StrictJSON.SyntaxError`.
  package init(jsonText: Data) throws {
    try self.init(node: JSONNode.parse(jsonText))
  }

  package init(node: JSONNode) throws {
    root = try Kind(node: node, path: "")
  }

  package var node: JSONNode { root.node }
}

extension PayloadLayout.Kind {
  var node: JSONNode {
    if let name = scalarName { return JSONNode(.string(name)) }
    switch self {
    case .optional(let inner): return JSONNode(.object(["optional": inner.node]))
    case .array(let inner): return JSONNode(.object(["array": inner.node]))
    case .structure(let fields):
      return JSONNode(
        .object([
          "fields": JSONNode(
            .array(
              fields.map { field in
                var members = ["name": JSONNode(.string(field.name)), "kind": field.kind.node]
                if field.nullWhenAbsent { members["null"] = JSONNode(.literal("true")) }
                return JSONNode(.object(members))
              }))
        ]))
    default: return JSONNode(.null)
    }
  }

  init(node: JSONNode, path: String) throws {
    func fail(_ reason: String) -> PayloadLayoutError {
      PayloadLayoutError("the layout \(path.isEmpty ? "" : "at '\(path)' ")\(reason)")
    }
    switch node.value {
    case .null:
      self = .unknown
    case .string(let name):
      guard let kind = Self.scalars[name] else { throw fail("names an unknown kind '\(name)'") }
      self = kind
    case .object(let members):
      guard members.count == 1, let (key, value) = members.first else {
        throw fail("is an object with \(members.count) keys, not one")
      }
      switch key {
      case "optional": self = .optional(try Self(node: value, path: path + "?"))
      case "array": self = .array(try Self(node: value, path: path + "[]"))
      case "fields":
        guard case .array(let items) = value.value else { throw fail("has 'fields' that is not an array") }
        var fields: [PayloadLayout.Field] = []
        var names = Set<String>()
        for item in items {
          guard case .object(let field) = item.value, case .string(let name)? = field["name"]?.value,
            let kind = field["kind"]
          else { throw fail("has a field without a 'name' string and a 'kind'") }
          var nullWhenAbsent = false
          if let null = field["null"] {
            guard case .literal("true") = null.value else {
              throw fail("has a field whose 'null' is not true")
            }
            nullWhenAbsent = true
          }
          guard field.count == (nullWhenAbsent ? 3 : 2) else { throw fail("has a field with unknown keys") }
          guard names.insert(name).inserted else { throw fail("names the field '\(name)' twice") }
          let fieldPath = path.isEmpty ? name : path + "." + name
          fields.append(
            PayloadLayout.Field(
              name: name, kind: try Self(node: kind, path: fieldPath), nullWhenAbsent: nullWhenAbsent))
        }
        self = .structure(fields)
      default:
        throw fail("has an unknown key '\(key)'")
      }
    default:
      throw fail("is not a kind")
    }
  }
}
