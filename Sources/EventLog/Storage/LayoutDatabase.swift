import Foundation
import LMDB
import Synchronization

/// The `layouts` database (format 4, `Docs/OnDiskFormat.md`): one entry per revision of an
/// event type's payload layout at a schema version.
///
/// - key: the type name's length (1 byte), its UTF-8, the schema version (UInt16 big-endian),
///   the revision (UInt32 big-endian), so that a type's revisions are adjacent and in order;
/// - value: a format byte (1), the sequence of the event that recorded it (UInt64
///   little-endian), then the layout's JSON text (``PayloadLayout/jsonText``).
enum LayoutDatabase {
  static let valueFormat: UInt8 = 1

  static func keyPrefix(_ key: LayoutKey) -> [UInt8] {
    let type = Array(key.type.utf8.prefix(RecordCodec.maximumTypeLength))
    return [UInt8(type.count)] + type + [UInt8(key.schemaVersion >> 8), UInt8(key.schemaVersion & 0xFF)]
  }

  static func key(_ layout: RecordedLayout) -> [UInt8] {
    var key = keyPrefix(LayoutKey(type: layout.type, schemaVersion: layout.schemaVersion))
    withUnsafeBytes(of: layout.revision.bigEndian) { key += $0 }
    return key
  }

  static func value(_ layout: RecordedLayout) -> [UInt8] {
    var value = [valueFormat]
    withUnsafeBytes(of: layout.sequence.littleEndian) { value += $0 }
    value += layout.layout.jsonText
    return value
  }

  /// The revision stored under `key` with `value`.
  static func decode(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> RecordedLayout {
    func damaged(_ reason: String) -> EventStoreError {
      .corruptedRecord(sequence: 0, reason: "a stored layout \(reason)")
    }
    guard let typeLength = key.first.map(Int.init), key.count == 1 + typeLength + 6,
      let type = UTF8Validation.string(UnsafeRawBufferPointer(rebasing: key[1..<(1 + typeLength)]))
    else { throw damaged("has a key that does not read") }
    let schemaVersion = UInt16(key[1 + typeLength]) << 8 | UInt16(key[2 + typeLength])
    let revision = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 3 + typeLength, as: UInt32.self))
    guard value.count > 9, value[0] == valueFormat else {
      throw damaged("of '\(type)' has an unknown format")
    }
    let sequence = UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
    do {
      let layout = try PayloadLayout(jsonText: Data(UnsafeRawBufferPointer(rebasing: value[9...])))
      return RecordedLayout(
        type: type, schemaVersion: schemaVersion, revision: revision, sequence: sequence, layout: layout)
    } catch {
      throw damaged("of '\(type)' does not read: \(error)")
    }
  }

  /// The latest revision of `key`'s layout, or `nil`.
  static func latest(_ key: LayoutKey, in txn: Transaction, database: Database) throws -> RecordedLayout? {
    let prefix = keyPrefix(key)
    return try txn.withCursor(in: database) { cursor in
      var found = try cursor.seek(prefix + [0xFF, 0xFF, 0xFF, 0xFF])
      found = try found ? cursor.move(.previous) : cursor.move(.last)
      // The seek lands past every revision (no revision is 0xFFFFFFFF); one step back is the last.
      guard found, cursor.key.starts(with: prefix), cursor.key.count == prefix.count + 4 else { return nil }
      return try decode(key: cursor.key, value: cursor.value)
    }
  }

  /// Every revision of `key`, oldest first.
  static func revisions(of key: LayoutKey, in txn: Transaction, database: Database) throws -> [RecordedLayout]
  {
    let prefix = keyPrefix(key)
    return try txn.withCursor(in: database) { cursor in
      var layouts: [RecordedLayout] = []
      var found = try cursor.seek(prefix)
      while found, cursor.key.starts(with: prefix) {
        if cursor.key.count == prefix.count + 4 {
          layouts.append(try decode(key: cursor.key, value: cursor.value))
        }
        found = try cursor.move(.next)
      }
      return layouts
    }
  }

  /// Every revision, by type, schema version and revision.
  static func all(in txn: Transaction, database: Database) throws -> [RecordedLayout] {
    try txn.withCursor(in: database) { cursor in
      var layouts: [RecordedLayout] = []
      var found = try cursor.move(.first)
      while found {
        layouts.append(try decode(key: cursor.key, value: cursor.value))
        found = try cursor.move(.next)
      }
      return layouts
    }
  }

  /// Stores a new revision; a stored revision is never replaced.
  static func insert(_ layout: RecordedLayout, in txn: WriteTransaction, database: Database) throws {
    let key = key(layout)
    let value = value(layout)
    try key.withUnsafeBytes { k in
      try value.withUnsafeBytes { v in try txn.put(v, forKey: k, in: database, flags: .noOverwrite) }
    }
  }
}

/// The latest committed revision of each layout a store has read or written: the append's
/// common path asks it rather than the database.
final class LayoutCache: Sendable {
  private let latest = Mutex<[LayoutKey: RecordedLayout]>([:])
  /// The types and schema versions whose latest revision the open found in an earlier layout
  /// than this build's type (an optional field added): the first append of the new layout
  /// records it as the next revision.
  private let evolving = Mutex<Set<LayoutKey>>([])
  /// Whether ``evolving`` has any key: the append's common path reads this flag alone.
  private let anyEvolving = Atomic<Bool>(false)

  func noteEvolving(_ key: LayoutKey) {
    _ = evolving.withLock { $0.insert(key) }
    anyEvolving.store(true, ordering: .releasing)
  }

  func isEvolving(_ key: LayoutKey) -> Bool {
    anyEvolving.load(ordering: .acquiring) && evolving.withLock { $0.contains(key) }
  }

  func layout(_ key: LayoutKey) -> RecordedLayout? { latest.withLock { $0[key] } }

  /// Notes a committed revision (it replaces an older one only).
  func note(_ layout: RecordedLayout) {
    let key = LayoutKey(type: layout.type, schemaVersion: layout.schemaVersion)
    latest.withLock { latest in
      if (latest[key]?.revision ?? 0) < layout.revision { latest[key] = layout }
    }
  }
}

/// Records layouts in one write transaction: the append's hook (``WriteBatch``) and the
/// format-4 upgrade's pass over the log.
///
/// A payload of a type and schema version whose latest recorded revision describes it (always,
/// once that revision is complete) records nothing; otherwise the layout the event carries
/// (``NewEvent/layout``) is merged into the latest revision and, when the result describes the
/// payload, stored as the next revision, at the event's sequence.
struct LayoutRecorder {
  /// Types and schema versions whose recorded layout is complete, recently seen: an append of a
  /// thousand events of one type asks the cache once.
  private var complete: [LayoutKey] = []
  /// Revisions this transaction wrote (not committed yet, so not in the cache: the next
  /// transaction that needs one reads it from the database and notes it there).
  private var written: [LayoutKey: RecordedLayout] = [:]

  /// Records what `event`, stored at `sequence`, needs.
  @inline(__always)
  mutating func record(
    _ event: NewEvent, at sequence: UInt64, cache: LayoutCache, database: Database?, in txn: WriteTransaction
  ) throws {
    // Without a layout of its own, an event cannot add a revision: nothing to look up.
    guard event.payloadEncoding == .binary, event.layout != nil, let database else { return }
    for key in complete where key.schemaVersion == event.schemaVersion && key.type == event.type { return }
    try record(
      LayoutKey(type: event.type, schemaVersion: event.schemaVersion), payload: event.payload, at: sequence,
      proposed: { event.layout?.layout }, cache: cache, database: database, in: txn)
  }

  /// Records a new revision of `key`'s layout if the latest does not describe `payload` and
  /// `proposed` (called only then) knows enough.
  mutating func record(
    _ key: LayoutKey, payload: [UInt8], at sequence: UInt64, proposed: () throws -> PayloadLayout?,
    cache: LayoutCache, database: Database, in txn: WriteTransaction
  ) throws {
    var latest = written[key] ?? cache.layout(key)
    if written[key] == nil, latest.map({ !$0.isComplete && !$0.layout.describes(payload) }) ?? true {
      // The cache may be behind another process: the database is the truth.
      latest = try LayoutDatabase.latest(key, in: txn, database: database)
      if let latest { cache.note(latest) }
    }
    if let latest, (latest.isComplete && !cache.isEvolving(key)) || latest.layout.describes(payload) {
      if latest.isComplete { noteComplete(key) }
      return
    }
    guard let proposed = try proposed() else { return }
    var merged = proposed
    if let latest {
      if let both = latest.layout.merged(with: proposed) {
        merged = both
      } else {
        // A new layout of the type (an optional field added, which the open checked): it is
        // the next revision, and the earlier ones describe the payloads stored before it.
        guard cache.isEvolving(key), LayoutEvolution(from: latest.layout, to: proposed).incompatibility == nil
        else { return }
      }
    }
    let layout = merged
    guard layout.describes(payload) else { return }
    let revision = RecordedLayout(
      type: key.type, schemaVersion: key.schemaVersion, revision: (latest?.revision ?? 0) + 1,
      sequence: sequence, layout: layout)
    try LayoutDatabase.insert(revision, in: txn, database: database)
    written[key] = revision
    if revision.isComplete { noteComplete(key) }
  }

  private mutating func noteComplete(_ key: LayoutKey) {
    if complete.count == 16 { complete.removeFirst() }
    complete.append(key)
  }
}
