import Foundation
import LMDB
import TestKit
import Testing

/// An environment's directory and files must be what they claim to be (issue 14, item 1).
@Suite("LMDB environment files")
struct EnvironmentFileTests {
  let directory = TemporaryDirectory("lmdb-files")

  /// A new environment at `name`, created and closed, so that its directory and files exist.
  func existingEnvironment(_ name: String = "env") throws -> String {
    let path = directory.path(name)
    _ = try Environment(path: path)
    return path
  }

  /// A file outside the environment that must stay as it is.
  func victim() throws -> (path: String, contents: Data) {
    let contents = Data("precious contents\n".utf8)
    return (try directory.file("victim-\(UUID().uuidString)", contents), contents)
  }

  @Test(
    "a data.mdb or lock.mdb that is a symbolic link is refused on open, read-only too; its target is unchanged",
    arguments: ["data.mdb", "lock.mdb"], [false, true])
  func symbolicLinks(name: String, readOnly: Bool) throws {
    let path = try existingEnvironment()
    let victim = try victim()
    try FileManager.default.removeItem(atPath: path + "/" + name)
    try FileManager.default.createSymbolicLink(atPath: path + "/" + name, withDestinationPath: victim.path)
    var options = Environment.Options()
    options.readOnly = readOnly
    let error = try #require(throws: LMDBError.self) { try Environment(path: path, options: options) }
    #expect(error.code == .symbolicLink)
    #expect(error.description.contains("'\(path)/\(name)'"), "\(error)")
    #expect(error.description.contains("symbolic link"), "\(error)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: victim.path)) == victim.contents)
  }

  @Test(
    "a new environment whose lock.mdb is a dangling symbolic link is refused, and the link stays dangling")
  func danglingLink() throws {
    let path = directory.path("new")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    chmod(path, 0o700)
    let target = directory.path("created-through-the-link")
    try FileManager.default.createSymbolicLink(atPath: path + "/lock.mdb", withDestinationPath: target)
    #expect(throws: LMDBError.self) { try Environment(path: path) }
    #expect(!FileManager.default.fileExists(atPath: target))
  }

  @Test("two environments whose data.mdb are hard links of one file: the second is refused")
  func hardLinks() throws {
    let first = try existingEnvironment("first")
    let second = directory.path("second")
    try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
    chmod(second, 0o700)
    try FileManager.default.linkItem(atPath: first + "/data.mdb", toPath: second + "/data.mdb")
    for path in [first, second] {
      let error = try #require(throws: LMDBError.self) { try Environment(path: path) }
      #expect(error.code == .tooManyLinks)
      #expect(error.description.contains("hard links"), "\(error)")
    }
  }

  @Test("a data.mdb that is a FIFO or a directory is refused without opening it")
  func notRegularFiles() throws {
    let fifo = try existingEnvironment("fifo")
    try FileManager.default.removeItem(atPath: fifo + "/data.mdb")
    try #require(mkfifo(fifo + "/data.mdb", 0o600) == 0)
    let fifoError = try #require(throws: LMDBError.self) { try Environment(path: fifo) }
    #expect(fifoError.code == .wrongFileType)
    #expect(fifoError.description.contains("a FIFO"), "\(fifoError)")
    let folder = try existingEnvironment("folder")
    try FileManager.default.removeItem(atPath: folder + "/lock.mdb")
    try FileManager.default.createDirectory(atPath: folder + "/lock.mdb", withIntermediateDirectories: false)
    let folderError = try #require(throws: LMDBError.self) { try Environment(path: folder) }
    #expect(folderError.description.contains("a directory, not a regular file"), "\(folderError)")
  }

  @Test(
    "an environment directory that group or others can write to is refused, naming the path and the mode",
    arguments: [0o777, 0o770, 0o702, 0o1777] as [mode_t])
  func looseDirectory(mode: mode_t) throws {
    let path = try existingEnvironment()
    try #require(chmod(path, mode) == 0)
    for readOnly in [false, true] {
      var options = Environment.Options()
      options.readOnly = readOnly
      let error = try #require(throws: LMDBError.self) { try Environment(path: path, options: options) }
      #expect(error.code == .unsafePermissions)
      #expect(error.description.contains("'\(path)'"), "\(error)")
      #expect(error.description.contains("can write to the directory"), "\(error)")
    }
    try #require(chmod(path, 0o750) == 0)
    _ = try Environment(path: path)
  }

  @Test("a path that is a regular file is refused as not an environment directory")
  func fileAsDirectory() throws {
    let path = try directory.file("plain", Data("x".utf8))
    let error = try #require(throws: LMDBError.self) { try Environment(path: path) }
    #expect(error.description.contains("not an environment directory"), "\(error)")
  }
}

/// A full disk is named as such, gives its space back, and cannot crash a new environment
/// (issue 14, item 8).
@Suite("LMDB environment on a full disk")
struct FullDiskTests {
  @Test(
    "a transaction that fills the disk fails as 'the disk is full' naming the path, and gives its space back")
  func failedWrite() throws {
    let disk = try SmallFileSystem(bytes: 2 << 20)
    let path = disk.path("env")
    let environment = try Environment(path: path)
    let database = try environment.openDatabase("values")
    let sizeBefore = dataFileSize(path)
    let freeBefore = disk.freeBytes()
    let value = [UInt8](repeating: 7, count: 64 << 10)
    let error = try #require(throws: LMDBError.self) {
      try environment.write { txn in
        for key in 0..<64 { try txn.put(value, forKey: Array("key-\(key)".utf8), in: database) }
      }
    }
    #expect(error.code == .noSpace, "\(error)")
    #expect(
      error.description.hasPrefix("the disk is full: cannot write the event log at '\(path)'"), "\(error)")
    #expect(dataFileSize(path) <= sizeBefore)
    #expect(disk.freeBytes() >= freeBefore)
    // The environment still works for what fits.
    try environment.write { txn in try txn.put([1], forKey: [1], in: database) }
    let stored = try environment.read { txn in try txn.value(forKey: [1], in: database) }
    #expect(stored == [1])
  }

  @Test("a new environment on a full disk is refused with an error, not created until SIGBUS")
  func newEnvironment() throws {
    let disk = try SmallFileSystem(bytes: 256 << 10)
    try disk.fill()
    let error = try #require(throws: LMDBError.self) { try Environment(path: disk.path("env")) }
    #expect(error.code == .noSpace)
    #expect(error.description.hasPrefix("the disk is full: cannot create the event log at '"), "\(error)")
  }
}
