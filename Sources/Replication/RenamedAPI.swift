import EventLog

// The public names of the last release that this one renamed, kept for one release as fix-its
// (Docs/CHANGELOG.md); they go in the release after.

extension Replicator {
  /// Removed: the store's schema says which streams replicate.
  @available(
    *, unavailable,
    message:
      "the store's schema says which streams replicate (AppSchema.replicatedStreams): drop 'isReplicated:'"
  )
  public convenience init(
    store: EventStore, transport: any ReplicationTransport,
    isReplicated: @escaping @Sendable (StreamID) -> Bool,
    options: ReplicationOptions = ReplicationOptions()
  ) {
    self.init(store: store, transport: transport, options: options)
  }
}

extension LocalReplica {
  /// Removed: the store's schema says which streams replicate.
  @available(
    *, unavailable,
    message:
      "the store's schema says which streams replicate (AppSchema.replicatedStreams): drop 'isReplicated:'"
  )
  public init(store: EventStore, isReplicated: @escaping @Sendable (StreamID) -> Bool) {
    self.init(store: store)
  }
}
