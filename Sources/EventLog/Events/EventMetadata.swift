import Foundation

/// Where an event came from: the IDs that tie it to a request and its cause, and its origin.
public struct EventMetadata: Hashable, Sendable {
  /// Ties together every event caused by one request or one sync.
  public var correlationID: UUID?
  /// The event or command that caused this one.
  public var causationID: UUID?
  /// What produced the event, for example `cli`, `app` or `sync`; at most 1,000 UTF-8 bytes.
  public var origin: String

  /// Creates metadata.
  public init(correlationID: UUID? = nil, causationID: UUID? = nil, origin: String = "") {
    self.correlationID = correlationID
    self.causationID = causationID
    self.origin = origin
  }
}
