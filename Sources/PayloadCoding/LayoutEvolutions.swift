import Foundation
import Synchronization

/// The recorded layouts, other than its own, that each payload or row type of this process has
/// been stored in: what a decode that fails falls back on (EventLog's `RecordedEvent.decode(_:)`, a
/// `Codable` `TableRow`), rewriting the stored bytes into the type's layout
/// (``PayloadLayout/transcoding(_:from:)``) and decoding those.
///
/// An open notes here each registered type whose environment recorded it in another, compatible
/// layout (an optional field added, or one a newer build added). A type whose layout never
/// changed has no entry, and its decode never looks here: the common path pays nothing.
package final class LayoutEvolutions: Sendable {
  /// The evolutions of this process.
  package static let shared = LayoutEvolutions()

  private struct Entry {
    var current: PayloadLayout
    /// The recorded layouts unlike `current`, newest first.
    var recorded: [PayloadLayout]
  }

  private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

  /// Notes that values of `type`, whose layout is `current`, may be stored in `recorded`
  /// (newest first).
  package func note(_ type: Any.Type, current: PayloadLayout, recorded: [PayloadLayout]) {
    guard !recorded.isEmpty else { return }
    entries.withLock { entries in
      var entry = entries[ObjectIdentifier(type)] ?? Entry(current: current, recorded: [])
      if entry.current != current { entry = Entry(current: current, recorded: []) }
      for layout in recorded where !entry.recorded.contains(layout) { entry.recorded.append(layout) }
      entries[ObjectIdentifier(type)] = entry
    }
  }

  /// `bytes`, stored in a layout noted for `type`, in `type`'s own layout; `nil` when no noted
  /// layout describes them.
  package func transcoded(_ bytes: UnsafeRawBufferPointer, to type: Any.Type) -> [UInt8]? {
    guard let entry = entries.withLock({ $0[ObjectIdentifier(type)] }) else { return nil }
    for layout in entry.recorded {
      if let rewritten = entry.current.transcoding(bytes, from: layout) { return rewritten }
    }
    return nil
  }
}
