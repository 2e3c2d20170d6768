import Foundation
import Synchronization

/// Standard input, output and error that the process was started without (`<&-`, `>&-`).
///
/// A descriptor the process was started without is taken by the next file it opens: the
/// concurrency runtime's event queue takes descriptor 0 before any command runs, so "standard
/// input" would read from it. ``reserveClosedDescriptors()``, called first thing in `main`, puts
/// `/dev/null` on each missing one and remembers it, so that reading or writing it fails as
/// closed (``InputReader``, ``Console``) instead of touching another file.
public enum StandardStreams {
  /// The descriptors (0, 1, 2) that were closed at start, each now holding `/dev/null`.
  private static let closed = Mutex<Set<Int32>>([])
  /// Keeps the `/dev/null` handles open for the life of the process.
  private static let placeholders = Mutex<[FileHandle]>([])

  /// Finds which of descriptors 0, 1 and 2 are closed and reserves them. Call it before anything
  /// else opens a file (the first line of `main.swift`).
  public static func reserveClosedDescriptors() {
    // `/dev/fd/N` exists exactly while descriptor N is open; without `/dev/fd` nothing is known.
    guard FileManager.default.fileExists(atPath: "/dev/fd/") else { return }
    for descriptor: Int32 in 0...2 where !FileManager.default.fileExists(atPath: "/dev/fd/\(descriptor)") {
      // Opening takes the lowest free descriptor: this one, since the lower ones are open.
      guard let handle = FileHandle(forUpdatingAtPath: "/dev/null") else { continue }
      if handle.fileDescriptor == descriptor {
        placeholders.withLock { $0.append(handle) }
        closed.withLock { _ = $0.insert(descriptor) }
      } else {
        try? handle.close()
      }
    }
  }

  /// Whether `descriptor` (0, 1 or 2) was closed when the process started.
  public static func wasClosed(_ descriptor: Int32) -> Bool {
    closed.withLock { $0.contains(descriptor) }
  }
}
