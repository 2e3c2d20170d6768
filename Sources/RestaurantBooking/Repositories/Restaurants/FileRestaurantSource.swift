import Foundation

/// A snapshot of the catalog from one PostgREST response body in a file, or on standard input
/// for the path `-`: a JSON array of `{"id": "<uuid>", "name": "…", "cuisine": "…"}`.
public struct FileRestaurantSource: RestaurantSource {
  /// The file's path; `-` for standard input.
  public let path: String
  /// The largest body accepted, in bytes.
  public let maximumBytes: Int

  /// Creates a source reading `path` (`-`: standard input).
  public init(path: String, maximumBytes: Int = 512 << 20) {
    self.path = path
    self.maximumBytes = maximumBytes
  }

  /// `file:<path>`, or `stdin` for standard input.
  public var sourceDescription: String { path == "-" ? "stdin" : "file:\(path)" }

  /// Reads and validates the body.
  /// - Throws: ``RestaurantSyncError/unreadableInput(path:reason:)`` and the row errors of a page.
  /// - Complexity: O(n) for n rows.
  public func fetchAll() async throws -> [RemoteRestaurant] {
    let data = try read()
    var seen: [UUID: Int] = [:]
    return try PostgRESTRestaurantBody.decode(data, offset: 0, seen: &seen)
  }

  private func read() throws(RestaurantSyncError) -> Data {
    let shown = path == "-" ? "standard input" : path
    var isDirectory: ObjCBool = false
    if path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      isDirectory.boolValue
    {
      throw .unreadableInput(path: shown, reason: "it is a directory")
    }
    do {
      // A regular file, a FIFO, a pipe or /dev/stdin: read to the end, whatever the file's size says.
      let handle =
        path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { if path != "-" { try? handle.close() } }
      var data = Data()
      while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
        data.append(chunk)
        if data.count > maximumBytes {
          throw RestaurantSyncError.unreadableInput(path: shown, reason: "larger than \(maximumBytes) bytes")
        }
      }
      return data
    } catch let error as RestaurantSyncError {
      throw error
    } catch {
      throw .unreadableInput(path: shown, reason: Self.reason(of: error))
    }
  }

  /// The system's reason inside a Foundation error (`Is a directory`), not `NSCocoaErrorDomain
  /// error 256`.
  private static func reason(of error: any Error) -> String {
    var error = error as NSError
    if error.domain != NSPOSIXErrorDomain, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
      error = underlying
    }
    guard error.domain == NSPOSIXErrorDomain else { return error.localizedDescription }
    switch Int32(error.code) {
    case EISDIR: return "it is a directory"
    case ENOENT: return "no such file"
    default: return error.localizedFailureReason ?? error.localizedDescription
    }
  }
}
