import Foundation
import LMDB
import TestKit
import Testing

@Suite("LMDB compacting copy")
struct CompactTests {
  let directory = TemporaryDirectory("lmdb-compact")

  /// Whether `data.mdb` of `path` holds `marker`'s bytes anywhere.
  func dataFile(_ path: String, contains marker: [UInt8]) throws -> Bool {
    let data = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    return data.range(of: Data(marker)) != nil
  }

  @Test("a deleted value stays in data.mdb's free pages until compact(using:) replaces the file")
  func deletedValueIsGoneAfterCompact() throws {
    let path = directory.environment()
    let marker = Array("erased-subject-key-\(UUID().uuidString)".utf8)
    var environment: Environment? = try Environment(path: path)
    let keys = try #require(environment).openDatabase("subject_keys")
    let other = try #require(environment).openDatabase("other")
    try #require(environment).write { txn in
      try txn.put(marker + Array(repeating: 0x5A, count: 64), forKey: Array("subject-1".utf8), in: keys)
      try txn.put(Array("kept".utf8), forKey: Array("kept-key".utf8), in: other)
    }
    try #require(environment).write { txn in _ = try txn.delete(forKey: Array("subject-1".utf8), in: keys) }
    #expect(try dataFile(path, contains: marker), "LMDB keeps the freed page: the test can fail")

    let sizes = try #require(environment).compact(using: path + "/compacting")
    #expect(try #require(environment).isClosed)
    environment = nil
    #expect(!(try dataFile(path, contains: marker)))
    #expect(sizes.bytesAfter <= sizes.bytesBefore)
    #expect(sizes.bytesAfter == dataFileSize(path))
    #expect(!FileManager.default.fileExists(atPath: path + "/compacting"))
    let mode = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.posixPermissions] as? Int
    #expect(mode == 0o600)

    // The lock file's state was of the old file: its magic number is cleared, so that only an
    // opener alone, which rebuilds it, uses it. The next open reads and writes.
    let lockHeader = try Data(contentsOf: URL(fileURLWithPath: path + "/lock.mdb")).prefix(4)
    #expect(lockHeader == Data([0, 0, 0, 0]))
    let reopened = try Environment(path: path)
    let reopenedKeys = try reopened.openDatabase("subject_keys")
    let reopenedOther = try reopened.openDatabase("other")
    try reopened.read { txn throws in
      #expect(try txn.value(forKey: Array("subject-1".utf8), in: reopenedKeys) == nil)
      #expect(try txn.value(forKey: Array("kept-key".utf8), in: reopenedOther) == Array("kept".utf8))
    }
    try reopened.write { txn in try txn.put(Array("v".utf8), forKey: Array("after".utf8), in: reopenedOther) }
    try reopened.read { txn throws in
      #expect(try txn.value(forKey: Array("after".utf8), in: reopenedOther) == Array("v".utf8))
    }
  }

  @Test("this process's own lock is not another process's; a read-only environment is not compacted")
  func ownLockAndReadOnly() throws {
    let path = directory.environment()
    let environment = try Environment(path: path)
    _ = try environment.openDatabase("things")
    #expect(try environment.otherProcessID() == nil)
    // Asking twice keeps this process's own lock: the probe's descriptor stays open.
    #expect(try environment.otherProcessID() == nil)
    environment.close()
    #expect(throws: LMDBError.self) { try environment.otherProcessID() }

    var options = Environment.Options()
    options.readOnly = true
    let readOnly = try Environment(path: path, options: options)
    #expect(throws: LMDBError.self) { _ = try readOnly.compact(using: path + "/compacting") }
    #expect(!readOnly.isClosed)
  }

  @Test("what an interrupted compaction left in the scratch directory is removed first")
  func leftoverScratchIsReplaced() throws {
    let path = directory.environment()
    let environment = try Environment(path: path)
    let things = try environment.openDatabase("things")
    try environment.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: things) }
    let scratch = path + "/compacting"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
    try Data("stale copy".utf8).write(to: URL(fileURLWithPath: scratch + "/data.mdb"))
    _ = try environment.compact(using: scratch)
    #expect(!FileManager.default.fileExists(atPath: scratch))
    let reopened = try Environment(path: path)
    let reopenedThings = try reopened.openDatabase("things")
    try reopened.read { txn throws in
      #expect(try txn.value(forKey: Array("k".utf8), in: reopenedThings) == Array("v".utf8))
    }
  }

  @Test("a scratch path that is a symbolic link is refused, and its target is untouched")
  func scratchLinkIsRefused() throws {
    let path = directory.environment()
    let environment = try Environment(path: path)
    _ = try environment.openDatabase("things")
    let elsewhere = directory.path("elsewhere")
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
    try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere + "/data.mdb"))
    try FileManager.default.createSymbolicLink(atPath: path + "/compacting", withDestinationPath: elsewhere)
    #expect(throws: LMDBError.self) { _ = try environment.compact(using: path + "/compacting") }
    #expect(try Data(contentsOf: URL(fileURLWithPath: elsewhere + "/data.mdb")) == Data("keep".utf8))
    #expect(!environment.isClosed)
    #expect(try environment.otherProcessID() == nil)
  }

  @Test("copyCompacted(to:) writes a copy that opens as an environment and refuses an existing directory")
  func copyCompactedToNewDirectory() throws {
    let path = directory.environment()
    let environment = try Environment(path: path)
    let things = try environment.openDatabase("things")
    try environment.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: things) }
    let copy = directory.path("copy")
    try environment.copyCompacted(to: copy)
    #expect(throws: LMDBError.self) { try environment.copyCompacted(to: copy) }
    let opened = try Environment(path: copy)
    let copiedThings = try opened.openDatabase("things")
    try opened.read { txn throws in
      #expect(try txn.value(forKey: Array("k".utf8), in: copiedThings) == Array("v".utf8))
    }
  }
}
