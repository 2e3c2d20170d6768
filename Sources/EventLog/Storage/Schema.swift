import Foundation
import LMDB

/// The databases of an event store environment and the encoding of their keys and values.
/// See `Docs/OnDiskFormat.md`.
struct Schema: Sendable {
  /// The on-disk format this build writes. Format 2 added checkpoints that follow the head
  /// (``Checkpoint/followsHead``); format 3 the `skipped` and `state` databases and the device
  /// ID; format 4 the `layouts` database, JSON payloads (record flag bit 2) and row dates as
  /// `BinaryEncoder` writes them; format 5 records of format 2 (provenance, data subjects, the
  /// hash chain). An older environment is upgraded on its first writable open.
  static let formatVersion: UInt32 = 5
  /// The formats this build opens.
  static let readableFormats: ClosedRange<UInt32> = 1...formatVersion

  /// `meta`: `"format"` → UInt32 format version.
  let meta: Database
  /// `events`: sequence (native UInt64, `MDB_INTEGERKEY`) → record (``RecordCodec``).
  let events: Database
  /// `event_ids`: event UUID (16 bytes) → sequence (UInt64 little-endian).
  let eventIDs: Database
  /// `stream_events` (`MDB_DUPSORT | MDB_DUPFIXED`): stream ID (UTF-8) → big-endian version
  /// followed by big-endian sequence (16 bytes), one value per event of the stream.
  let streamEvents: Database
  /// `projections`: projection name → UInt32 version + UInt64 checkpoint sequence (little-endian),
  /// or ``Checkpoint/followsHead``.
  let checkpoints: Database
  /// `skipped` (`MDB_INTEGERKEY`): sequence → the reason the projections skip that event (a
  /// ``EventStore/SkippedEvent/Kind`` byte, then UTF-8). `nil` in a read-only environment written before
  /// it existed (then no event is skipped).
  let skipped: Database?
  /// `state`: key → value, state kept beside the log by extensions (replication's cursor and
  /// marks), written in the same transactions as the events it describes. `nil` as ``skipped``.
  let state: Database?
  /// `layouts`: each event type's payload layout per schema version and revision
  /// (``LayoutDatabase``). `nil` as ``skipped`` (then no layout is recorded).
  let layouts: Database?
  /// `by_time` (format 5): recorded-at then sequence (``timeKey(microseconds:sequence:)``, 16
  /// bytes) → empty: the log in time order. `nil` as ``skipped``.
  let byTime: Database?
  /// `by_device` (format 5, `MDB_DUPSORT | MDB_DUPFIXED`): an origin device (16 UUID bytes) → the
  /// sequences (UInt64 big-endian) of its events, for every event another device first recorded
  /// (sixteen zero bytes: of unknown origin). This environment's own events are left out (most
  /// of a device's log, and each would cost an appending transaction a search): they are the
  /// sequences the index does not list. `nil` as ``skipped``.
  let byDevice: Database?
  /// `type_counts` (format 5): a type name (UTF-8) → how many events of the type the log holds
  /// (UInt64 little-endian). `nil` as ``skipped``.
  let typeCounts: Database?
  /// `subject_keys` and `erased_subjects`: the data subjects' keys and erasure fences
  /// (``SubjectKeyDatabase``). `nil` as ``skipped`` (then no key is held and none erased).
  let subjectKeys: SubjectKeyDatabase?

  /// The `meta` key of the environment's device ID (16 UUID bytes).
  static let deviceKey = Array("device".utf8)
  /// The `meta` key of the hybrid logical clock (Int64 microseconds since 1970, little-endian):
  /// with the head's recorded-at, the largest recorded-at the log has seen. Written only when the
  /// head's record does not carry it (``WriteBatch/finish()``).
  static let clockKey = Array("clock".utf8)

  init(environment: Environment) throws {
    meta = try environment.openDatabase("meta")
    events = try environment.openDatabase("events", flags: [.create, .integerKeys])
    eventIDs = try environment.openDatabase("event_ids")
    streamEvents = try environment.openDatabase(
      "stream_events", flags: [.create, .duplicateSort, .duplicateFixed])
    checkpoints = try environment.openDatabase("projections")
    skipped = try Self.optional { try environment.openDatabase("skipped", flags: [.create, .integerKeys]) }
    state = try Self.optional { try environment.openDatabase("state") }
    layouts = try Self.optional { try environment.openDatabase("layouts") }
    byTime = try Self.optional { try environment.openDatabase("by_time") }
    byDevice = try Self.optional {
      try environment.openDatabase("by_device", flags: [.create, .duplicateSort, .duplicateFixed])
    }
    typeCounts = try Self.optional { try environment.openDatabase("type_counts") }
    if let keys = try Self.optional({ try environment.openDatabase("subject_keys") }),
      let erased = try Self.optional({ try environment.openDatabase("erased_subjects") })
    {
      subjectKeys = SubjectKeyDatabase(keys: keys, erased: erased)
    } else {
      subjectKeys = nil
    }
  }

  /// The key an event has in ``byDevice``: its origin device, or sixteen zero bytes when its
  /// origin is unknown; `nil` for an event of this environment's own device `own`, which the
  /// index leaves out.
  static func deviceIndexKey(of provenance: RecordedEvent.Provenance?, own: UUID?) -> UUID? {
    guard let device = provenance?.device else { return RecordCodec.unknownDevice }
    return device == own ? nil : device
  }

  /// The `meta` key that says the audit indexes (``byTime``, ``byDevice``, ``typeCounts``) hold
  /// every event: UInt64 little-endian, the last sequence indexed, `UInt64.max` once complete.
  static let auditIndexesKey = Array("audit-indexes".utf8)

  /// The key of an event in ``byTime``: its recorded-at (microseconds since 1970, big-endian with
  /// the sign bit flipped, so that keys sort as the times do), then its sequence (big-endian).
  static func timeKey(microseconds: Int64, sequence: UInt64) -> (UInt64, UInt64) {
    ((UInt64(bitPattern: microseconds) ^ 0x8000_0000_0000_0000).bigEndian, sequence.bigEndian)
  }

  /// The recorded-at and the sequence of a ``byTime`` key.
  static func parseTimeKey(_ bytes: UnsafeRawBufferPointer) -> (microseconds: Int64, sequence: UInt64) {
    let time =
      UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) ^ 0x8000_0000_0000_0000
    return (
      Int64(bitPattern: time), UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    )
  }

  /// A database that an older build did not create: absent (`nil`) when a read-only open finds
  /// none.
  private static func optional(_ open: () throws -> Database) throws -> Database? {
    do {
      return try open()
    } catch let error as LMDBError where error.code == .notFound {
      return nil
    }
  }

  /// The sequences in `first...last` of the events the projections skip, read in `txn`.
  /// - Complexity: O(log n + k) for k skipped events in the range; one lookup when none is.
  func skippedSequences(from first: UInt64, through last: UInt64, in txn: Transaction) throws -> Set<UInt64> {
    guard let skipped, first <= last else { return [] }
    var sequences = Set<UInt64>()
    try txn.withCursor(in: skipped) { cursor in
      var found = try withUnsafeBytes(of: first) { try cursor.seek($0) }
      while found {
        let sequence = cursor.key.loadUnaligned(as: UInt64.self)
        if sequence > last { break }
        sequences.insert(sequence)
        found = try cursor.move(.next)
      }
    }
    return sequences
  }

  /// The LMDB database name of a projection's table.
  static func tableDatabaseName(projection: String, table: String) -> String {
    "p:\(projection):\(table)"
  }

  static func streamEntry(version: UInt64, sequence: UInt64) -> (UInt64, UInt64) {
    (version.bigEndian, sequence.bigEndian)
  }

  static func parseStreamEntry(_ bytes: UnsafeRawBufferPointer) -> (version: UInt64, sequence: UInt64) {
    (
      UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
      UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    )
  }

  /// How far a projection has applied the log.
  ///
  /// A projection that every commit applies would move its checkpoint at every commit, and that
  /// one small write dirtied a page of its own in each durable commit. Instead, a writer that
  /// applies a projection stores ``followsHead`` once: the projection has applied every event in
  /// the log, whatever the head. The rule that keeps this true: a write transaction that appends
  /// events without applying a projection whose checkpoint follows the head first stores the
  /// head as that projection's checkpoint (``WriteBatch``), in the same transaction.
  struct Checkpoint: Equatable, Sendable {
    var version: UInt32
    /// The last sequence applied, or ``followsHead``.
    var sequence: UInt64

    /// The stored sequence of a checkpoint that follows the head.
    static let followsHead = UInt64.max

    /// A checkpoint of `version` that follows the head.
    static func following(version: UInt32) -> Checkpoint {
      Checkpoint(version: version, sequence: followsHead)
    }

    /// Whether the checkpoint follows the head.
    var isFollowingHead: Bool { sequence == Self.followsHead }

    /// The last sequence applied, given the log's head.
    func sequence(atHead head: UInt64) -> UInt64 { isFollowingHead ? head : sequence }

    /// The checkpoint with a following one replaced by `head` (for comparing with the head).
    func resolved(atHead head: UInt64) -> Checkpoint {
      Checkpoint(version: version, sequence: sequence(atHead: head))
    }
  }

  static func encode(_ checkpoint: Checkpoint) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 12)
    bytes.withUnsafeMutableBytes {
      $0.storeBytes(of: checkpoint.version.littleEndian, toByteOffset: 0, as: UInt32.self)
      $0.storeBytes(of: checkpoint.sequence.littleEndian, toByteOffset: 4, as: UInt64.self)
    }
    return bytes
  }

  static func decodeCheckpoint(_ bytes: UnsafeRawBufferPointer) -> Checkpoint? {
    guard bytes.count == 12 else { return nil }
    return Checkpoint(
      version: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
      sequence: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
  }
}
