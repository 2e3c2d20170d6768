import Foundation
import LMDB

/// What an open found when it compared this build's types with the layouts the environment
/// recorded (``EventStore/checkLayouts(environment:schema:appSchema:path:)``).
struct LayoutCheck {
  /// Each type with recorded fields this build's type does not know, and those fields.
  var newer: [String] = []
  /// Event types and schema versions whose latest revision is an earlier layout than the
  /// build's (``LayoutCache/noteEvolving(_:)``).
  var evolving: [LayoutKey] = []
  /// The row layouts a writable open records, under their `state` keys.
  var rowLayouts: [(key: [UInt8], value: [UInt8])] = []
  /// The projections whose rows are stored in an earlier layout than the build's row type: a
  /// writable open rebuilds them, so that all their rows are in the build's layout.
  var rebuild: [String] = []
}

extension EventStore {
  /// The `state` key under which a projection's row layouts are recorded.
  static func rowLayoutKey(projection: String) -> [UInt8] { Array("layouts.row.\(projection)".utf8) }

  /// Compares each registered event type (at its schema version) and each table's `Codable` row
  /// type with the layouts the environment recorded, in one read transaction, before the open
  /// writes anything:
  ///
  /// - a recorded layout that does not read into the type (``LayoutEvolution/incompatibility``)
  ///   throws ``EventStoreError/incompatibleLayout(path:type:field:reason:)``;
  /// - recorded layouts unlike the type's but compatible are noted in ``LayoutEvolutions`` (so
  ///   that payloads and rows stored in them decode), and those with fields the type lacks are
  ///   returned in ``LayoutCheck/newer``;
  /// - a row layout not recorded yet (or of another projection version) is returned to record,
  ///   and a table whose rows are in an earlier layout than its row type's, to rebuild.
  static func checkLayouts(
    environment: Environment, schema: Schema, appSchema: AppSchema, path: String
  ) throws -> LayoutCheck {
    var check = LayoutCheck()
    try storage {
      try environment.read { txn in
        if let database = schema.layouts {
          for (key, type, layout) in appSchema.eventTypes.probedLayouts() {
            guard let layout else { continue }
            let revisions = try LayoutDatabase.revisions(of: key, in: txn, database: database)
            let name = "'\(key.type)' (schema \(key.schemaVersion))"
            let differing = try compare(
              revisions.map(\.layout), with: layout, type: name, path: path, check: &check)
            LayoutEvolutions.shared.note(type, current: layout, recorded: differing)
            if let latest = revisions.last,
              !LayoutEvolution(from: latest.layout, to: layout).addedFields.isEmpty
            {
              check.evolving.append(key)
            }
          }
        }
        guard let state = schema.state else { return }
        for projection in appSchema.projections {
          guard let rows = (projection as? any CodedRowProjection)?.codedRows else { continue }
          let key = rowLayoutKey(projection: projection.name)
          let stored = try txn.value(forKey: key, in: state).flatMap(decodeRowLayouts)
          let recorded = stored?.version == projection.version ? stored?.layouts ?? [] : []
          let name = "rows '\(rows.name)' of the projection '\(projection.name)'"
          let differing = try compare(recorded, with: rows.layout, type: name, path: path, check: &check)
          LayoutEvolutions.shared.note(rows.type, current: rows.layout, recorded: differing)
          if let latest = recorded.last, LayoutEvolution(from: latest, to: rows.layout).isSame { continue }
          check.rowLayouts.append(
            (key, encodeRowLayouts(version: projection.version, recorded + [rows.layout])))
          if !recorded.isEmpty { check.rebuild.append(projection.name) }
        }
      }
    }
    return check
  }

  /// The layouts of `recorded` (oldest first) unlike `current`, newest first; notes fields only
  /// a newer build knows in `check`.
  /// - Throws: ``EventStoreError/incompatibleLayout(path:type:field:reason:)`` for the newest
  ///   layout that does not read into `current`.
  private static func compare(
    _ recorded: [PayloadLayout], with current: PayloadLayout, type: String, path: String,
    check: inout LayoutCheck
  ) throws -> [PayloadLayout] {
    var differing: [PayloadLayout] = []
    var unknown: [String] = []
    for layout in recorded.reversed() {
      let evolution = LayoutEvolution(from: layout, to: current)
      if let (field, reason) = evolution.incompatibility {
        throw EventStoreError.incompatibleLayout(path: path, type: type, field: field, reason: reason)
      }
      if !evolution.isSame { differing.append(layout) }
      for field in evolution.unknownFields where !unknown.contains(field) { unknown.append(field) }
    }
    if !unknown.isEmpty {
      check.newer.append(
        "\(type) with the fields \(unknown.sorted().map { "'\($0)'" }.joined(separator: ", "))")
    }
    return differing
  }

  /// A `state` value of row layouts: the projection's version (UInt32 little-endian), then a
  /// JSON array of the layouts' texts, oldest first.
  static func encodeRowLayouts(version: UInt32, _ layouts: [PayloadLayout]) -> [UInt8] {
    var value: [UInt8] = []
    withUnsafeBytes(of: version.littleEndian) { value += $0 }
    value += JSONNode(.array(layouts.map(\.node))).rendered
    return value
  }

  /// The version and layouts of a ``encodeRowLayouts(version:_:)`` value; `nil` when it does not
  /// read (then the open records its own again).
  static func decodeRowLayouts(_ value: [UInt8]) -> (version: UInt32, layouts: [PayloadLayout])? {
    guard value.count > 4 else { return nil }
    let version = value.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
    guard let node = try? JSONNode.parse(Data(value[4...])), case .array(let items) = node.value,
      let layouts = try? items.map(PayloadLayout.init(node:))
    else { return nil }
    return (version, layouts)
  }
}
