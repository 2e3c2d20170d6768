import Foundation
import LMDB
import TestKit
import Testing

@Suite("LMDB environment")
struct EnvironmentTests {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "lmdb-tests-\(UUID().uuidString)")

  func path(_ name: String = "env") -> String {
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
  }

  @Test("values written in a committed transaction are read back; a throwing one leaves nothing")
  func commitAndAbort() throws {
    let env = try Environment(path: path())
    let db = try env.openDatabase("things")
    try env.write { txn in try txn.put(Array("v1".utf8), forKey: Array("k1".utf8), in: db) }
    struct Boom: Error {}
    #expect(throws: Boom.self) {
      try env.write { txn throws in
        try txn.put(Array("v2".utf8), forKey: Array("k2".utf8), in: db)
        throw Boom()
      }
    }
    try env.read { txn throws in
      #expect(try txn.value(forKey: Array("k1".utf8), in: db) == Array("v1".utf8))
      #expect(try txn.value(forKey: Array("k2".utf8), in: db) == nil)
      #expect(try txn.count(in: db) == 1)
    }
  }

  @Test("cursors walk keys in order, seek, and delete")
  func cursors() throws {
    let env = try Environment(path: path())
    let db = try env.openDatabase("ordered")
    try env.write { txn throws in
      for key in ["b", "a", "d", "c"] { try txn.put(Array(key.utf8), forKey: Array(key.utf8), in: db) }
    }
    let keys = try env.read { txn throws in
      try txn.withCursor(in: db) { cursor throws in
        var keys: [String] = []
        var found = try cursor.move(.first)
        while found {
          keys.append(String(decoding: cursor.key, as: UTF8.self))
          found = try cursor.move(.next)
        }
        return keys
      }
    }
    #expect(keys == ["a", "b", "c", "d"])
    try env.read { txn throws in
      try txn.withCursor(in: db) { cursor throws in
        #expect(try cursor.seek(Array("bb".utf8)))
        #expect(String(decoding: cursor.key, as: UTF8.self) == "c")
        #expect(try !cursor.seek(Array("e".utf8)))
        #expect(try cursor.move(.last))
        #expect(String(decoding: cursor.value, as: UTF8.self) == "d")
      }
    }
    try env.write { txn throws in
      try txn.withCursor(in: db) { cursor throws in
        #expect(try cursor.seek(Array("b".utf8), exact: true))
        try cursor.deleteCurrent()
      }
      #expect(try txn.delete(forKey: Array("a".utf8), in: db))
      #expect(try !txn.delete(forKey: Array("zz".utf8), in: db))
    }
    #expect(try env.read { try $0.count(in: db) } == 2)
  }

  @Test("append and no-overwrite flags fail with keyExists, naming the database")
  func putFlags() throws {
    let env = try Environment(path: path())
    let db = try env.openDatabase("flags")
    try env.write { txn in try txn.put([1], forKey: [5], in: db, flags: .append) }
    do {
      try env.write { txn in try txn.put([1], forKey: [4], in: db, flags: .append) }
      Issue.record("no error")
    } catch let error as LMDBError {
      #expect(error.code == .keyExists)
      #expect(error.operation == "mdb_put")
      #expect(error.context == "flags")
      #expect(error.description.contains("MDB_KEYEXIST"))
    }
    #expect(throws: LMDBError.self) {
      try env.write { txn in try txn.put([2], forKey: [5], in: db, flags: .noOverwrite) }
    }
  }

  @Test("a 1 MiB map grows to hold 100 MiB, retrying the transaction that filled it")
  func mapGrowth() throws {
    var options = Environment.Options()
    options.mapSize = 1 << 20
    options.durability = .noSync
    let env = try Environment(path: path(), options: options)
    let db = try env.openDatabase("big", flags: [.create, .integerKeys])
    let value = [UInt8](repeating: 7, count: 10_000)
    var runs = 0
    for batch in 0..<100 {
      try env.write { txn throws in
        runs += 1
        for index in 0..<100 {
          var key = UInt64(batch * 100 + index)
          try withUnsafeBytes(of: &key) { k in
            try value.withUnsafeBytes { try txn.put($0, forKey: k, in: db) }
          }
        }
      }
    }
    #expect(runs > 100, "some transactions must have been retried after growing the map")
    #expect(env.mapSize >= 100 << 20)
    #expect(try env.read { try $0.count(in: db) } == 10_000)
  }

  @Test("the map stops at its maximum with mapFull")
  func maximumMapSize() throws {
    var options = Environment.Options()
    options.mapSize = 1 << 20
    options.maximumMapSize = 2 << 20
    let env = try Environment(path: path(), options: options)
    let db = try env.openDatabase("capped")
    let value = [UInt8](repeating: 1, count: 100_000)
    do {
      for index in 0..<100 {
        try env.write { txn in try txn.put(value, forKey: Array("\(index)".utf8), in: db) }
      }
      Issue.record("no error")
    } catch let error as LMDBError {
      #expect(error.code == .mapFull)
    }
  }

  @Test("a missing environment opened read-only is an error naming the path")
  func missingReadOnly() throws {
    var options = Environment.Options()
    options.readOnly = true
    let missing = path("does-not-exist")
    do {
      _ = try Environment(path: missing, options: options)
      Issue.record("no error")
    } catch {
      #expect(error.code == .noSuchFile)
      #expect(error.description.contains(missing))
    }
  }

  @Test("a file that is not an LMDB environment is refused")
  func foreignFile() throws {
    let envPath = path("foreign")
    try FileManager.default.createDirectory(atPath: envPath, withIntermediateDirectories: true)
    try Data(repeating: 0x42, count: 64 * 1024).write(
      to: URL(fileURLWithPath: envPath).appendingPathComponent("data.mdb"))
    #expect(throws: LMDBError.self) { _ = try Environment(path: envPath) }
  }

  @Test("the directory is 0700 and the files 0600, whatever the umask")
  func permissions() throws {
    let envPath = path("private")
    let old = umask(0)
    defer { umask(old) }
    let env = try Environment(path: envPath)
    _ = try env.openDatabase("x")
    let manager = FileManager.default
    let dirMode = try manager.attributesOfItem(atPath: envPath)[.posixPermissions] as? Int
    #expect(dirMode == 0o700)
    for file in ["data.mdb", "lock.mdb"] {
      let mode = try manager.attributesOfItem(atPath: envPath + "/" + file)[.posixPermissions] as? Int
      #expect(mode == 0o600, "\(file)")
    }
  }

  @Test("after close every call throws closed, closing again does nothing, and the path opens again")
  func close() throws {
    let path = path()
    let env = try Environment(path: path)
    let db = try env.openDatabase("things")
    try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: db) }
    #expect(!env.isClosed)
    env.close()
    env.close()
    #expect(env.isClosed)
    func isClosed(_ body: () throws -> Void) -> Bool {
      do {
        try body()
        return false
      } catch {
        return (error as? LMDBError)?.code == .closed
      }
    }
    #expect(isClosed { _ = try env.read { txn in try txn.value(forKey: Array("k".utf8), in: db) } })
    #expect(isClosed { try env.write { txn in try txn.put([1], forKey: [1], in: db) } })
    #expect(isClosed { _ = try env.info() })
    #expect(isClosed { try env.sync() })
    #expect(isClosed { _ = try env.clearStaleReaders() })
    // The handle is closed, so the same environment opens again in this process while `env` lives.
    let reopened = try Environment(path: path)
    let again = try reopened.openDatabase("things")
    #expect(try reopened.read { txn in try txn.value(forKey: Array("k".utf8), in: again) } == Array("v".utf8))
  }

  @Test("close waits for a read transaction running on another thread")
  func closeWaitsForReaders() throws {
    let env = try Environment(path: path())
    let db = try env.openDatabase("things")
    try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: db) }
    let inRead = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let readTheValue = DispatchSemaphore(value: 0)
    Thread {
      let value = try? env.read { txn in
        inRead.signal()
        release.wait()
        return try txn.value(forKey: Array("k".utf8), in: db)
      }
      if value == Array("v".utf8) { readTheValue.signal() }
    }.start()
    inRead.wait()
    let closed = DispatchSemaphore(value: 0)
    Thread {
      env.close()
      closed.signal()
    }.start()
    #expect(closed.wait(timeout: .now() + .milliseconds(100)) == .timedOut, "close waited for the read")
    release.signal()
    #expect(readTheValue.wait(timeout: .now() + .seconds(10)) == .success, "the read ran to its end")
    #expect(closed.wait(timeout: .now() + .seconds(10)) == .success)
    #expect(env.isClosed)
  }

  @Test("reads run concurrently from many threads while a writer commits")
  func concurrentReaders() async throws {
    let env = try Environment(path: path())
    let db = try env.openDatabase("counter", flags: [.create, .integerKeys])
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for index in 0..<500 {
          var key = UInt64(index)
          try env.write { txn in try withUnsafeBytes(of: &key) { try txn.put($0, forKey: $0, in: db) } }
        }
      }
      for _ in 0..<4 {
        group.addTask {
          var last = 0
          for _ in 0..<500 {
            let count = try env.read { try $0.count(in: db) }
            #expect(count >= last)
            last = count
          }
        }
      }
      try await group.waitForAll()
    }
  }

  @Test(
    "preallocation keeps the data file written ahead of its pages: commits rarely change its size",
    arguments: [0, 1 << 20])
  func preallocation(window: Int) throws {
    var options = Environment.Options()
    options.preallocation = window
    let path = path("prealloc-\(window)")
    var sizes: [Int] = []
    do {
      let env = try Environment(path: path, options: options)
      let db = try env.openDatabase("rows")
      for index in 0..<300 {
        try env.write { txn in try txn.put(Self.row(index), forKey: Self.key(index), in: db) }
        let info = try env.info()
        let size = dataFileSize(path)
        sizes.append(size)
        #expect(size >= (info.lastPage + 1) * info.pageSize)
        #expect(size <= env.mapSize, "never past the map")
      }
    }
    let changes = zip(sizes, sizes.dropFirst()).filter { $0 != $1 }.count
    if window == 0 {
      // LMDB extends the file itself whenever a commit writes a new page at its end.
      #expect(changes > 30, "\(changes) size changes without preallocation")
    } else {
      // ~400 KiB of growth: the first write transaction's extension covers it.
      #expect(changes <= 2, "\(changes) size changes with a \(window)-byte window: \(Set(sizes).sorted())")
    }
    // The zeros past the used pages are never read: everything reads back after reopening.
    let env = try Environment(path: path, options: options)
    let db = try env.openDatabase("rows")
    try env.read { txn throws in
      #expect(try txn.count(in: db) == 300)
      for index in 0..<300 { #expect(try txn.value(forKey: Self.key(index), in: db) == Self.row(index)) }
    }
  }

  @Test("preallocation stops at the map's end")
  func preallocationStopsAtTheMap() throws {
    var options = Environment.Options()
    options.mapSize = 1 << 20
    options.preallocation = 8 << 20
    let path = path()
    let env = try Environment(path: path, options: options)
    let db = try env.openDatabase("rows")
    try env.write { txn in try txn.put(Self.row(1), forKey: Self.key(1), in: db) }
    #expect(dataFileSize(path) == env.mapSize)
  }

  static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) } }
  static func row(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(index % 251), count: 1_000) }
}
