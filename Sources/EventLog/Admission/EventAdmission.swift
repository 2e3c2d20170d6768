/// Decides whether an event that comes from outside this app's own commands (an import, a pull
/// from another device) may be folded into the projections.
///
/// A domain states here what its projections rely on: which event types it reads up to which
/// schema version, and the structural rules every event keeps (the stream an event belongs on,
/// the order of a stream's events, the fields that must be present). Rules that change between
/// app versions (a party-size range, a date in the past) do not belong here: the log is what
/// happened.
///
/// The store asks it in ``EventStore/ingest(_:expectingHead:allOrNothing:updatingState:)`` and ``EventStore/verify(progress:)``,
/// and on every writable open for the events it skipped before (a newer build may read them now).
/// A verdict must depend only on the event itself (its type, schema version, payload, stream and
/// version within the stream), so that every device and every replay agree.
public protocol EventAdmission: Sendable {
  /// The verdict on `event`, as it is or would be stored (with its sequence and stream version).
  func verdict(for event: RecordedEvent) -> EventVerdict
}

/// What an ``EventAdmission`` says of one event.
public enum EventVerdict: Sendable, Hashable {
  /// The projections fold it.
  case admitted
  /// This build cannot read it (an unknown type, a newer schema version): it is stored as it
  /// came, the projections skip it, and a later build that reads it folds it in.
  case unreadable(reason: String)
  /// It breaks a structural rule of the domain: stored as it came (when it comes by a pull),
  /// kept out of the projections and reported.
  case invalid(reason: String)

  /// Whether the projections fold the event.
  public var isAdmitted: Bool { self == .admitted }

  /// The reason for a verdict other than ``admitted``.
  public var reason: String? {
    switch self {
    case .admitted: nil
    case .unreadable(let reason), .invalid(let reason): reason
    }
  }
}

extension EventStore {
  /// An event the projections skip, and why.
  public struct SkippedEvent: Sendable, Hashable {
    /// Why an event is skipped.
    public enum Kind: UInt8, Sendable, Hashable {
      /// This build cannot read it (``EventVerdict/unreadable(reason:)``).
      case unreadable = 1
      /// It breaks the domain's rules (``EventVerdict/invalid(reason:)``).
      case invalid = 2
      /// A projection refused it (threw) when it came from elsewhere: it stays skipped, whatever
      /// a later admission says, since folding it failed.
      case refused = 3
    }

    /// The event's sequence number.
    public var sequence: UInt64
    /// Why it is skipped.
    public var kind: Kind
    /// The verdict's reason.
    public var reason: String

    /// Creates a skipped event.
    public init(sequence: UInt64, kind: Kind, reason: String) {
      self.sequence = sequence
      self.kind = kind
      self.reason = reason
    }

    /// The stored value: the kind's byte, then the reason in UTF-8.
    var encoded: [UInt8] { [kind.rawValue] + Array(reason.utf8.prefix(4_000)) }

    init?(sequence: UInt64, encoded bytes: UnsafeRawBufferPointer) {
      guard let first = bytes.first, let kind = Kind(rawValue: first) else { return nil }
      self.init(
        sequence: sequence, kind: kind,
        reason: String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self))
    }
  }
}
