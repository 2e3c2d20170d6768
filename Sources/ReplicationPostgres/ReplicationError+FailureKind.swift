import Replication

extension ReplicationError: ReplicationTransportError {
  /// Fatal: a schema that does not fit or a protocol violation stays until someone changes it.
  public var failureKind: TransportFailureKind { .fatal }
}
