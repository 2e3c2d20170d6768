import Foundation
import Synchronization

/// A layout as one process knows it for one event type, shared by reference: what
/// EventLog's `NewEvent` carries to the append that may record it.
package final class KnownLayout: Sendable {
  package let layout: PayloadLayout
  /// ``PayloadLayout/isComplete``, computed once.
  package let isComplete: Bool

  package init(_ layout: PayloadLayout) {
    self.layout = layout
    isComplete = layout.isComplete
  }
}

/// What this process has learned of each payload type's layout, by Swift type: the layouts of
/// every value it encoded, merged.
///
/// EventLog's `NewEvent.init(_:id:metadata:)` asks it for every event, so its common path is one locked
/// dictionary lookup: once a type's layout is complete (every optional's and array's inner kind
/// known, which the static types give for most fields), nothing is observed again; while it is
/// not, a payload that the known layout describes (`nil` where the kind is unknown) costs one
/// walk of its bytes, and only one that shows something new is observed
/// (``PayloadLayout/init(observing:)``) and merged in.
package final class TypeLayouts: Sendable {
  /// The layouts of this process.
  package static let shared = TypeLayouts()

  private enum Entry {
    case known(KnownLayout)
    /// Observation failed, or two values disagreed: no layout describes the type.
    case indescribable
  }

  private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

  /// The layout of `value`'s type that describes `encoded` (its binary payload), or `nil` when
  /// there is none.
  package func layout<T: Encodable>(of value: T, encoded: [UInt8]) -> KnownLayout? {
    let id = ObjectIdentifier(T.self)
    switch entries.withLock({ $0[id] }) {
    case .indescribable?:
      return nil
    case .known(let known)? where known.isComplete || known.layout.describes(encoded):
      return known
    default:
      break
    }
    let observed = try? PayloadLayout(observing: value)
    return entries.withLock { entries -> KnownLayout? in
      guard let observed else {
        entries[id] = .indescribable
        return nil
      }
      var merged: PayloadLayout? = observed
      switch entries[id] {
      case .indescribable?: return nil
      case .known(let known)?: merged = known.layout.merged(with: observed)
      case nil: break
      }
      guard let merged, merged.describes(encoded) else {
        entries[id] = .indescribable
        return nil
      }
      let known = KnownLayout(merged)
      entries[id] = .known(known)
      return known
    }
  }
}
