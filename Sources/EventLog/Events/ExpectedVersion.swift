/// What an append expects of a stream's current version, for optimistic concurrency.
///
/// A stream's version is the number of events in it: 0 before its first event, then 1, 2, ….
public enum ExpectedVersion: Hashable, Sendable, CustomStringConvertible {
  /// No expectation: append whatever the version is.
  case any
  /// The stream must not exist yet (version 0).
  case noStream
  /// The stream must be exactly at this version.
  case exactly(UInt64)

  /// Whether a stream at `actual` satisfies the expectation.
  public func isSatisfied(by actual: UInt64) -> Bool {
    switch self {
    case .any: true
    case .noStream: actual == 0
    case .exactly(let version): actual == version
    }
  }

  /// The expectation in words: `any version`, `no stream`, `version 3`.
  public var description: String {
    switch self {
    case .any: "any version"
    case .noStream: "no stream"
    case .exactly(let version): "version \(version)"
    }
  }
}
