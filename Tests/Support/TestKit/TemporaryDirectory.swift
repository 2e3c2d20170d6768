import Foundation

/// A temporary directory for one test, created at once and removed when the value is released.
public final class TemporaryDirectory: Sendable {
  /// The directory.
  public let url: URL
  /// The directory's path.
  public var path: String { url.path }

  /// Creates `<label>-<UUID>` in the system's temporary directory.
  public init(_ label: String = "eventlog-tests") {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path for an environment inside the directory (not created yet).
  public func environment(_ name: String = "store") -> String { path(name) }

  /// A path inside the directory (not created).
  public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `data` to a file in the directory and returns its path.
  public func file(_ name: String, _ data: Data) throws -> String {
    let fileURL = url.appendingPathComponent(name)
    try data.write(to: fileURL)
    return fileURL.path
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}
