import Foundation

/// What the power-cut shim (`Tests/Support/PowerCutShim`, product `EventLogPowerCut`) logged of
/// an environment's `data.mdb`, and the file a power cut leaves after any prefix of that log.
///
/// A test runs `eventlog` with ``environment(directory:log:stopAfter:)`` set: the shim, loaded with
/// `LD_PRELOAD`, appends a record for every open, write (`pwrite`, `pwritev`, `write`, `writev`,
/// with the bytes written), `ftruncate`, `fsync`, `fdatasync` and `msync` of the file, in the order
/// they happened, across the processes that ran one after another; and with `stopAfter` it kills the
/// process (SIGKILL) just before the operation that would be the next record: the power went out
/// there. ``file(afterRecords:model:base:)`` then rebuilds the file from the first records as the disk
/// holds it after the cut, under one of two ``Model``s of what survives.
public struct PowerCutLog: Sendable {
  /// What survives a power cut of the writes that were not flushed.
  public enum Model: String, Sendable, CaseIterable, CustomStringConvertible {
    /// POSIX's: a write survives when a later `fsync`, `fdatasync` or `msync` of the same file
    /// returned before the cut, or when it was made through a descriptor opened with `O_DSYNC`
    /// (it returned once on the disk); every other write is lost.
    case synchronousWritesKept
    /// Harsher: a write survives only when a later flush of the same file returned before the
    /// cut; an `O_DSYNC` write that no flush followed is lost too (a disk or a platform that does
    /// not honour `O_DSYNC`: on Darwin such a write, like `fsync`, reaches the drive but not
    /// necessarily past its cache; only `F_FULLFSYNC` does).
    case onlyFlushedWritesKept

    /// The model's name.
    public var description: String { rawValue }
  }

  /// What one record says happened.
  public enum Kind: UInt32, Sendable {
    /// The file was opened (``Record/flags``: the open flags).
    case open = 1
    /// Bytes were written at an offset.
    case write = 2
    /// The file was truncated (or extended) to ``Record/length``.
    case truncate = 3
    /// `fsync` returned.
    case fsync = 4
    /// `fdatasync` returned.
    case fdatasync = 5
    /// `msync(MS_SYNC)` of a map of the file returned.
    case msync = 6
    /// A shared writable map of the file was made: writes through it are not in the log.
    case map = 7
  }

  /// One logged operation.
  public struct Record: Sendable {
    /// What happened.
    public var kind: Kind
    /// The process.
    public var pid: Int32
    /// The open flags (an open), or 1 when the write went through an `O_DSYNC` descriptor.
    public var flags: UInt32
    /// Where a write began.
    public var offset: UInt64
    /// A write's byte count, a truncation's new size, or an `msync`'s length.
    public var length: UInt64
    /// The file's absolute path.
    public var path: String
    /// The bytes written (a write).
    public var data: [UInt8]

    /// Whether this record makes the file's earlier writes durable.
    public var isFlush: Bool { kind == .fsync || kind == .fdatasync || kind == .msync }
  }

  /// Why a log cannot be read or used.
  public struct Failure: Error, CustomStringConvertible {
    /// What was wrong.
    public var description: String
  }

  /// The records, in the order they happened.
  public let records: [Record]

  /// Reads the log at `path`; none there is an empty log (the shim stopped the process before its
  /// first record).
  /// - Throws: ``Failure`` naming the record that is cut short or not a record.
  public init(contentsOf path: String) throws {
    guard FileManager.default.fileExists(atPath: path) else {
      records = []
      return
    }
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func integer<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
      var value: T = 0
      for index in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(bytes[at + index]) }
      return value
    }
    var records: [Record] = []
    var at = 0
    while at < bytes.count {
      let number = records.count + 1
      guard at + 40 <= bytes.count, integer(at, UInt32.self) == 0x5455_4350 else {
        throw Failure(description: "\(path): record \(number) (byte \(at)) is not a power-cut record")
      }
      guard let kind = Kind(rawValue: integer(at + 4, UInt32.self)) else {
        throw Failure(description: "\(path): record \(number) has an unknown kind")
      }
      let length = integer(at + 24, UInt64.self)
      let pathLength = Int(integer(at + 32, UInt32.self))
      let dataLength = kind == .write ? Int(clamping: length) : 0
      let end = at + 40 + pathLength + dataLength
      guard end <= bytes.count else { throw Failure(description: "\(path): record \(number) is cut short") }
      records.append(
        Record(
          kind: kind, pid: integer(at + 8, Int32.self), flags: integer(at + 12, UInt32.self),
          offset: integer(at + 16, UInt64.self), length: length,
          path: String(decoding: bytes[(at + 40)..<(at + 40 + pathLength)], as: UTF8.self),
          data: Array(bytes[(at + 40 + pathLength)..<end])))
      at = end
    }
    if let first = records.first, let other = records.first(where: { $0.path != first.path }) {
      throw Failure(description: "\(path): the log names two files, \(first.path) and \(other.path)")
    }
    self.records = records
  }

  /// The bytes of the logged file after a power cut that follows the first `count` records, as
  /// `model` says: the writes and truncations that survive, applied in their order to `base`
  /// (the file as it was on the disk when the log began: empty when the log holds its creation).
  /// - Throws: ``Failure`` when the file was mapped writable (writes the log cannot see).
  public func file(afterRecords count: Int, model: Model, base: [UInt8] = []) throws -> [UInt8] {
    let prefix = records.prefix(count)
    if let mapped = prefix.first(where: { $0.kind == .map }) {
      throw Failure(description: "\(mapped.path) was mapped writable: its writes are not in the log")
    }
    let lastFlush = prefix.lastIndex { $0.isFlush }
    var bytes = base
    for (index, record) in zip(prefix.indices, prefix) {
      let flushed = lastFlush.map { index < $0 } ?? false
      let synchronous = model == .synchronousWritesKept && record.kind == .write && record.flags & 1 != 0
      guard flushed || synchronous else { continue }
      switch record.kind {
      case .write:
        let end = Int(record.offset) + record.data.count
        if bytes.count < end { bytes += [UInt8](repeating: 0, count: end - bytes.count) }
        bytes.replaceSubrange(Int(record.offset)..<end, with: record.data)
      case .truncate:
        let size = Int(record.length)
        if size < bytes.count {
          bytes.removeLast(bytes.count - size)
        } else {
          bytes += [UInt8](repeating: 0, count: size - bytes.count)
        }
      case .open, .fsync, .fdatasync, .msync, .map: break
      }
    }
    return bytes
  }

  /// Puts the environment at `directory` (the logged one, or a copy's) in the state a power cut
  /// after the first `count` records leaves: its `data.mdb` rebuilt by
  /// ``file(afterRecords:model:base:)`` (none when nothing of it survives) and no `lock.mdb`
  /// (LMDB makes it again on the next open, as after a reboot: it holds no durable state).
  /// - Returns: the rebuilt file's bytes.
  @discardableResult
  public func cut(
    environment directory: String, afterRecords count: Int, model: Model, base: [UInt8] = []
  ) throws -> [UInt8] {
    let data = URL(fileURLWithPath: directory).appendingPathComponent("data.mdb")
    let bytes = try file(afterRecords: count, model: model, base: base)
    try? FileManager.default.removeItem(atPath: directory + "/lock.mdb")
    try? FileManager.default.removeItem(at: data)
    if !bytes.isEmpty {
      guard
        FileManager.default.createFile(
          atPath: data.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
      else { throw Failure(description: "could not write \(data.path)") }
    }
    return bytes
  }

  /// The built shim (`libEventLogPowerCut.so`, next to the test bundle), or `$EVENTLOG_POWERCUT_SHIM`.
  public static var shim: String {
    builtProduct("libEventLogPowerCut.so", override: "EVENTLOG_POWERCUT_SHIM")
  }

  /// The variables that load the shim into a process, logging the environment at `directory` to
  /// `log`, and with `stopAfter`, killing the process before the operation that would be that
  /// record's successor.
  public static func environment(directory: String, log: String, stopAfter: Int? = nil) -> [String: String] {
    var variables = [
      "LD_PRELOAD": shim,
      "EVENTLOG_POWERCUT_DIR": URL(fileURLWithPath: directory).resolvingSymlinksInPath().path,
      "EVENTLOG_POWERCUT_LOG": log,
    ]
    if let stopAfter { variables["EVENTLOG_POWERCUT_STOP_AFTER"] = String(stopAfter) }
    return variables
  }
}
