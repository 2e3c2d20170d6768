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
    do {
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
      let reason = (error as NSError).localizedDescription
      throw .unreadableInput(path: shown, reason: reason)
    }
  }
}
