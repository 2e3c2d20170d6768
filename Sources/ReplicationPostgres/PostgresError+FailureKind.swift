import Postgres
import Replication

extension PostgresError: ReplicationTransportError {
  /// Transient for what ``PostgresError/isTransient`` calls so, for a lock the server waited
  /// for too long (`55P03`), a statement it cancelled (`57014`) and a collision of positions
  /// (another writer's insert that bypassed `push`); rejected when the server refused the
  /// request's values as a whole (integrity constraints `23…`, data exceptions `22…`, a batch
  /// over the server's limits `54000`); fatal otherwise (a URL that cannot work included).
  public var failureKind: TransportFailureKind {
    if kind == .invalidInput { return .fatal }
    if isTransient { return .transient }
    if sqlState == "55P03" || sqlState == "57014" { return .transient }
    if constraint == "events_pkey" || constraint == "events_positions_gap_free" { return .transient }
    if let sqlState, sqlState.hasPrefix("23") || sqlState.hasPrefix("22") || sqlState == "54000" {
      return .rejected
    }
    return .fatal
  }

  /// Whether the statement ran out of time: the server cancelled it (`57014`: its
  /// `statement_timeout`) or this client did, at the statement's deadline (``PostgresError/Kind/timeout``).
  public var isTimeout: Bool { sqlState == "57014" || kind == .timeout }
}
