// The public names of the last release that this one renamed, kept for one release as fix-its:
// code written against them stops compiling with the replacement offered (Docs/CHANGELOG.md says
// what changed and how to move). They go in the release after.

/// Renamed ``ProjectionReader``.
@available(*, unavailable, renamed: "ProjectionReader")
public typealias ProjectionView = ProjectionReader

/// Renamed ``ProjectionWriter``.
@available(*, unavailable, renamed: "ProjectionWriter")
public typealias ProjectionState = ProjectionWriter

/// Renamed ``MissingRowPolicy``.
@available(*, unavailable, renamed: "MissingRowPolicy")
public typealias MissingRow = MissingRowPolicy

/// Nested in ``EventStore``: ``EventStore/IngestedEvent``.
@available(*, unavailable, renamed: "EventStore.IngestedEvent")
public typealias IngestedEvent = EventStore.IngestedEvent

/// Nested in ``EventStore``: ``EventStore/VerificationReport``.
@available(*, unavailable, renamed: "EventStore.VerificationReport")
public typealias VerificationReport = EventStore.VerificationReport

extension EventStore.VerificationReport {
  /// Renamed ``isClean``.
  @available(*, unavailable, renamed: "isClean")
  public var ok: Bool { isClean }
}

extension EventStoreError {
  /// Removed: match the error's case instead (`catch EventStoreError.closed`,
  /// `catch EventStoreError.storage(let failure)` and `failure.kind`).
  @available(
    *, unavailable,
    message: "match the EventStoreError case instead; a storage failure's kind is StorageFailure.kind"
  )
  public typealias Code = Never
}
