import Foundation

/// Scratch directories and fixture copies.
enum FileSystem {
  static func createDirectory(_ path: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
  }

  /// Copies every regular file of `source` into `destination` (created), skipping LMDB's
  /// `lock.mdb`, which the next open recreates.
  static func copyDirectory(_ source: String, to destination: String) throws {
    try createDirectory(destination)
    for name in try FileManager.default.contentsOfDirectory(atPath: source) where name != "lock.mdb" {
      try FileManager.default.copyItem(atPath: source + "/" + name, toPath: destination + "/" + name)
    }
  }

  /// The size in bytes of every file under `path`.
  static func size(of path: String) -> Int {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return 0 }
    return names.reduce(0) { total, name in
      let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
      return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
  }
}

/// Constants every system shares, so that none is favoured by its configuration.
enum BenchmarkDefaults {
  /// The LMDB map size of every LMDB system (eventlog, lmdb-raw, lmdb-append): large enough that
  /// no map growth happens during a measurement; the file grows only as it is written.
  static let mapSize = 8 << 30
  /// Events per write transaction when building fixtures (not measured).
  static let fixtureBatch = 10_000
}
