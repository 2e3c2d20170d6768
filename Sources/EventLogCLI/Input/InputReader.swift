import Foundation

/// Reads a whole input named on the command line: a regular file, a FIFO, a pipe, `/dev/stdin`,
/// or `-` for standard input. Anything readable works; what cannot be read fails with an
/// ``InputError`` naming it and the cause, never a trap.
public enum InputReader {
  /// The bytes read per call.
  static let chunkSize = 1 << 20

  /// Reads `name` (`-`: standard input) to its end.
  /// - Parameters:
  ///   - name: the input as named on the command line: a path, or `-` for standard input.
  ///   - maximumBytes: the most bytes accepted; more fails the read.
  /// - Returns: every byte of the input.
  /// - Throws: ``InputError``: missing, a directory, not permitted, closed, larger than
  ///   `maximumBytes`, or a read that failed.
  /// - Complexity: O(n) in the input's size.
  public static func read(_ name: String, maximumBytes: Int = .max) throws(InputError) -> Data {
    let handle: FileHandle
    if name == "-" {
      guard !StandardStreams.wasClosed(0) else { throw InputError(name: name, reason: "it is closed") }
      handle = FileHandle.standardInput
    } else {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory), isDirectory.boolValue {
        throw InputError(name: name, reason: "it is a directory")
      }
      do {
        handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: name))
      } catch {
        throw InputError(name: name, reason: reason(of: error))
      }
    }
    defer { if name != "-" { try? handle.close() } }
    return try read(handle, name: name, maximumBytes: maximumBytes)
  }

  /// Reads `handle`, opened for `name`, to its end.
  /// - Throws: ``InputError``: larger than `maximumBytes`, or a read that failed.
  static func read(_ handle: FileHandle, name: String, maximumBytes: Int) throws(InputError) -> Data {
    var data = Data()
    while true {
      let chunk: Data?
      do {
        chunk = try handle.read(upToCount: chunkSize)
      } catch {
        throw InputError(name: name, reason: reason(of: error))
      }
      guard let chunk, !chunk.isEmpty else { return data }
      guard data.count + chunk.count <= maximumBytes else {
        throw InputError(name: name, reason: "it is larger than \(maximumBytes) bytes")
      }
      data.append(chunk)
    }
  }

  private static func reason(of error: any Error) -> String {
    switch SystemErrorText.posixCode(of: error) {
    case Int(EISDIR)?: "it is a directory"
    case Int(ENOENT)?: "no such file"
    case Int(EBADF)?: "it is closed"
    default: SystemErrorText.reason(of: error)
    }
  }
}

/// An input that could not be read: exit status 1.
public struct InputError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The input as named on the command line (`-` for standard input).
  public var name: String
  /// Why, for example `it is a directory`.
  public var reason: String

  /// Creates the error.
  public init(name: String, reason: String) {
    self.name = name
    self.reason = reason
  }

  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }

  /// `cannot read '<name>': <reason>`, or `cannot read standard input: <reason>`.
  public var description: String {
    name == "-" ? "cannot read standard input: \(reason)" : "cannot read '\(name)': \(reason)"
  }
}
