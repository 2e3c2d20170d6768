import Foundation

/// A small tmpfs mounted for one test, to make a full disk on demand (never by replacing
/// `/dev/full`). Unmounted and removed when the value is released.
///
/// Mounting needs root (the tests run as root here and in CI). When it is not possible the
/// initializer throws, so a test that needs a full disk fails instead of passing silently.
public final class SmallFileSystem: Sendable {
  /// The mount point.
  public let path: String

  /// Why the file system could not be mounted.
  public struct MountError: Error, CustomStringConvertible {
    /// The size and mount point that failed, and `mount`'s standard error.
    public var description: String
  }

  /// Mounts a tmpfs of `bytes` (rounded up to pages by the kernel) on a new temporary directory.
  /// - Throws: ``MountError`` when `mount` fails (not root, no tmpfs).
  public init(bytes: Int) throws {
    path = FileManager.default.temporaryDirectory.appendingPathComponent("small-fs-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let run = try runChild("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", path])
    guard run.status == 0 else {
      try? FileManager.default.removeItem(atPath: path)
      throw MountError(
        description:
          "cannot mount a \(bytes)-byte tmpfs at \(path) (the full-disk tests need root): \(run.stderr)")
    }
  }

  /// A path inside the file system.
  public func path(_ name: String) -> String { path + "/" + name }

  /// Writes a filler file until the file system has at most `bytes` free (0: full; a write of one
  /// more page fails with `ENOSPC`).
  public func fill(leaving bytes: Int = 0) throws {
    let filler = path("filler-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: filler, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
    defer { try? handle.close() }
    for chunk in [1 << 20, 64 << 10, 4 << 10] {
      let zeros = Data(count: chunk)
      while freeBytes() - chunk >= bytes {
        do { try handle.write(contentsOf: zeros) } catch { break }
      }
    }
  }

  /// The bytes free for an unprivileged writer.
  public func freeBytes() -> Int {
    let attributes = try? FileManager.default.attributesOfFileSystem(forPath: path)
    return (attributes?[.systemFreeSize] as? NSNumber)?.intValue ?? 0
  }

  deinit {
    _ = try? runChild("/bin/umount", ["-l", path])
    try? FileManager.default.removeItem(atPath: path)
  }
}
