import Foundation

/// An entity of the common shape: created, its fields changed, deleted; kept by the package's
/// own events (``EntityCreated``, ``EntityChanged``, ``EntityDeleted``), table
/// (``EntitySchema``) and repository (``EntityRepository``), so that an app writes only the
/// struct, its indexes and its own repository protocol.
///
/// ```swift
/// struct DiningTable: Entity {
///   static let entityName = "DiningTable"
///   var id: UUID
///   var label: String
///   var seats: Int
/// }
/// ```
///
/// The struct is its own row (stored by the binary coder, `Codable`) and its events' payload. An
/// entity that needs events of its own (a booking's rules, a catalog's diff) is written in the
/// long form instead: its events, a ``TableProjection`` and a repository (`Docs/AddingAnEntity.md`).
public protocol Entity: TableRow, Codable, Hashable, Sendable {
  /// The entity's name in `UpperCamelCase` (`DiningTable`): its events are `DiningTableCreated`,
  /// `DiningTableChanged` and `DiningTableDeleted`, its streams `dining-table-<id>`, its
  /// projection `dining-table`. Never change it once events are stored.
  static var entityName: String { get }
  /// The entity's ID: its stream and its row's key.
  var id: UUID { get }
}

extension Entity {
  /// ``entityName`` in lower case with a `-` before each inner capital (`dining-table`): the
  /// projection's name and the streams' prefix.
  static var kebabName: String {
    var name = ""
    for (index, character) in entityName.enumerated() {
      if character.isUppercase && index > 0 { name.append("-") }
      name += character.lowercased()
    }
    return name
  }

  /// The fields of `self` as payloads render them, by name (an absent optional is left out).
  func renderedFields() throws -> [String: JSONNode] {
    let node = try JSONNode.parse(try PayloadJSONEncoder().encode(self))
    guard case .object(let members) = node.value else { return [:] }
    return members
  }

  /// The names of the fields whose values differ between `self` and `other`, sorted.
  func fieldsChanged(to other: Self) throws -> [String] {
    let old = try renderedFields()
    let new = try other.renderedFields()
    return Set(old.keys).union(new.keys).filter { old[$0]?.rendered != new[$0]?.rendered }.sorted()
  }

  /// `self` with the fields named in `fields` taken from `other`.
  func taking(_ fields: [String], from other: Self) throws -> Self {
    var members = try renderedFields()
    let new = try other.renderedFields()
    for field in fields { members[field] = new[field] }
    return try PayloadJSONDecoder().decode(Self.self, from: JSONNode(.object(members)).rendered)
  }
}
