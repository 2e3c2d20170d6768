import Foundation

/// A data subject was erased: every store that records this event (the device that erased, and
/// each device and server it replicates to) destroys its copy of the subject's key and refuses
/// that key from then on (its erasure fence). Stream: `subject-<subject>`.
///
/// Appended by ``EventStore/erase(subject:reason:)``; an event type of the layer, known to every
/// app's registry.
public struct SubjectErased: EventPayload, Hashable {
  /// The stored type name, `SubjectErased`.
  public static let eventType = "SubjectErased"
  /// The subject whose key is destroyed.
  public var subject: UUID
  /// Why (for the audit trail; it must not itself be personal data).
  public var reason: String

  /// Creates the event.
  public init(subject: UUID, reason: String) {
    self.subject = subject
    self.reason = reason
  }

  /// The prefix of the erasures' streams, `subject-`: replicated by every app that replicates.
  public static let streamPrefix = "subject-"

  /// The stream of `subject`'s erasure: `subject-<uuid>`.
  public static func stream(of subject: UUID) -> StreamID {
    StreamID(streamPrefix + subject.lowercasedString)
  }
}
