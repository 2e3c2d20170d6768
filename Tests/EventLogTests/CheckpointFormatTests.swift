import EventLog
import Foundation
import LMDB
import TestKit
import Testing

/// The `projections` checkpoints of format 2 (a checkpoint that follows the head, pinned by a
/// writer that does not apply the projection) and the upgrade from format 1, read and written
/// through the raw LMDB environment as `Docs/OnDiskFormat.md` describes them.
@Suite("Checkpoints and the format version")
struct CheckpointFormatTests {
  /// The stored value of a checkpoint that follows the head.
  static let followsHead = UInt64.max

  /// The raw environment of a closed store.
  struct Raw {
    let environment: Environment
    let meta: Database
    let checkpoints: Database

    init(_ path: String) throws {
      var options = Environment.Options()
      options.maxDatabases = 16
      environment = try Environment(path: path, options: options)
      meta = try environment.openDatabase("meta", flags: [])
      checkpoints = try environment.openDatabase("projections", flags: [])
    }

    var format: UInt32? {
      get throws {
        try environment.read { txn in
          try Array("format".utf8).withUnsafeBytes { k in
            try txn.withValue(forKey: k, in: meta) { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
          }
        }
      }
    }

    func setFormat(_ format: UInt32) throws {
      try environment.write { txn in
        var value = format.littleEndian
        try Array("format".utf8).withUnsafeBytes { k in
          try withUnsafeBytes(of: &value) { try txn.put($0, forKey: k, in: meta) }
        }
      }
    }

    /// The stored version and sequence of a projection's checkpoint.
    func checkpoint(_ name: String) throws -> (version: UInt32, sequence: UInt64)? {
      try environment.read { txn in
        try Array(name.utf8).withUnsafeBytes { k in
          try txn.withValue(forKey: k, in: checkpoints) { v in
            (
              UInt32(littleEndian: v.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
              UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
            )
          }
        }
      }
    }

    func setCheckpoint(_ name: String, version: UInt32, sequence: UInt64) throws {
      try environment.write { txn in
        var value = [UInt8](repeating: 0, count: 12)
        value.withUnsafeMutableBytes {
          $0.storeBytes(of: version.littleEndian, toByteOffset: 0, as: UInt32.self)
          $0.storeBytes(of: sequence.littleEndian, toByteOffset: 4, as: UInt64.self)
        }
        try Array(name.utf8).withUnsafeBytes { k in
          try value.withUnsafeBytes { try txn.put($0, forKey: k, in: checkpoints) }
        }
      }
    }
  }

  /// The `notes/per-stream` count of stream `s`.
  static func count(_ store: EventStore) throws -> [UInt8]? {
    try liveTables(store)["notes/per-stream"]?[Array("s".utf8)]
  }

  @Test("an applied projection's checkpoint follows the head; a writer without it pins it first")
  func followAndPin() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 1...5 { try await store?.append([try note("n\(index)")], to: "s") }
    #expect(try store?.read { try $0.checkpoint(of: "notes") } == 5)
    await close(&store)
    #expect(try Raw(path).checkpoint("notes")?.sequence == Self.followsHead)

    // A writer without the projection pins its checkpoint at the head it found, before appending.
    try await withStore(at: path) { without in
      try await without.append([try note("6"), try note("7")], to: "s")
    }
    let pinned = try Raw(path).checkpoint("notes")
    #expect(pinned?.sequence == 5 && pinned?.version == 1)

    // A writer with the projection catches it up and makes it follow the head again.
    store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    #expect(try store.map(Self.count) == (try BinaryEncoder().encode(UInt64(7))))
    #expect(try store?.read { try $0.checkpoint(of: "notes") } == 7)
    #expect(try store?.verify().isClean == true)
    await close(&store)
    #expect(try Raw(path).checkpoint("notes")?.sequence == Self.followsHead)
  }

  @Test("rebuilding the projections leaves their checkpoints following the head")
  func rebuildFollows() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path, projections: [NotesProjection()]) { store in
      for index in 1...4 { try await store.append([try note("n\(index)")], to: "s") }
      let rebuilt = try await store.rebuildProjections()
      #expect(rebuilt.throughSequence == 4)
      #expect(try store.read { try $0.checkpoint(of: "notes") } == 4)
    }
    let stored = try Raw(path).checkpoint("notes")
    #expect(stored?.sequence == Self.followsHead && stored?.version == 1)
  }

  @Test("a writer without the projection that appends nothing new does not pin it")
  func idempotentAppendDoesNotPin() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    let event = try note("once")
    try await withStore(at: path, projections: [NotesProjection()]) { store in
      try await store.append([event], to: "s")
    }
    try await withStore(at: path) { without in
      let again = try await without.append([event], to: "s")
      #expect(again.alreadyStored == true)
    }
    #expect(try Raw(path).checkpoint("notes")?.sequence == Self.followsHead)
  }

  @Test("a format-1 environment opens read-only as it is, and a writable open upgrades it to 5")
  func upgradeFromFormat1() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    var store: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    for index in 1...3 { try await store?.append([try note("n\(index)")], to: "s") }
    await close(&store)
    do {
      // What format 1 stored: an explicit checkpoint at the head.
      let raw = try Raw(path)
      #expect(try raw.format == 5)
      try raw.setFormat(1)
      try raw.setCheckpoint("notes", version: 1, sequence: 3)
    }

    var readOnly = EventStore.Options.fast
    readOnly.readOnly = true
    var reader: EventStore? = try EventStore(path: path, projections: [NotesProjection()], options: readOnly)
    #expect(try reader?.read { try $0.checkpoint(of: "notes") } == 3)
    #expect(try reader?.verify().isClean == true)
    await close(&reader)
    #expect(try Raw(path).format == 1)

    store = try EventStore(path: path, projections: [NotesProjection()], options: .fast)
    try await store?.append([try note("n4")], to: "s")
    #expect(try store.map(Self.count) == (try BinaryEncoder().encode(UInt64(4))))
    #expect(try store?.verify().isClean == true)
    await close(&store)
    let raw = try Raw(path)
    #expect(try raw.format == 5)
    #expect(try raw.checkpoint("notes")?.sequence == Self.followsHead)
  }

  @Test("a format newer than this build's is refused, naming the path and both versions")
  func newerFormatRefused() async throws {
    let dir = TemporaryDirectory()
    let path = dir.environment()
    try await withStore(at: path) { _ in }
    try Raw(path).setFormat(6)
    #expect {
      _ = try EventStore(path: path, options: .fast)
    } throws: { error in
      guard case .unsupportedFormat(let at, let found, let supported) = error as? EventStoreError else {
        return false
      }
      return at == path && found == 6 && supported == 5
    }
  }
}
