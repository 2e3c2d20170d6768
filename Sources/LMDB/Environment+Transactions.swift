import CLMDB
import Dispatch

extension Environment {
  /// What one attempt at a transaction came to.
  private enum Attempt<R> {
    case done(R)
    /// Another process grew the map: adopt its size and try again.
    case adoptMapSize
    /// The map is full: grow it and try again.
    case growMap
  }

  /// Begins a transaction; call it with `resizeLock` held shared.
  private func begin(readOnly: Bool) throws(LMDBError) -> OpaquePointer {
    try checkOpen("mdb_txn_begin")
    var txn: OpaquePointer?
    let flags = readOnly ? UInt32(MDB_RDONLY) : 0
    // A write transaction waits in mdb_txn_begin for LMDB's writer lock, for as long as another
    // process holds it; say so when asked to, rather than hang silently.
    var notice: DispatchWorkItem?
    if !readOnly, let onWait = options.onWriteLockWait {
      let item = DispatchWorkItem { onWait() }
      let delay = options.writeLockNoticeDelay.components
      let nanoseconds = Int(delay.seconds) * 1_000_000_000 + Int(delay.attoseconds / 1_000_000_000)
      DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: item)
      notice = item
    }
    let rc = mdb_txn_begin(handle, nil, flags, &txn)
    notice?.cancel()
    try check(rc, "mdb_txn_begin", context: path)
    guard let txn else { throw LMDBError(code: .invalid, operation: "mdb_txn_begin", context: path) }
    return txn
  }

  private func retrying<R>(_ attempt: () throws -> Attempt<R>) throws -> R {
    while true {
      switch try attempt() {
      case .done(let value): return value
      case .adoptMapSize: try growMap(adoptOnly: true)
      case .growMap: try growMap(adoptOnly: false)
      }
    }
  }

  /// Runs `body` in a read transaction: a consistent snapshot, for as long as `body` runs.
  ///
  /// Any thread may call this (`MDB_NOTLS`); keep `body` short, since an open reader keeps the
  /// pages it sees from being reused. Copy bytes out before returning. Do not begin another
  /// transaction inside `body`.
  /// - Throws: ``LMDBError`` (``LMDBError/Code/closed`` after ``close()``) or what `body` throws.
  public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    try retrying { () throws -> Attempt<R> in
      // The shared lock is held for the transaction's whole life: no resize while it is live.
      try resizeLock.withShared { () throws -> Attempt<R> in
        let raw: OpaquePointer
        do {
          raw = try begin(readOnly: true)
        } catch let error as LMDBError where error.code == .mapResized {
          return .adoptMapSize
        }
        let txn = Transaction(handle: raw, environment: self)
        let value: R
        do {
          value = try body(txn)
        } catch {
          txn.isLive = false
          mdb_txn_abort(raw)
          throw error
        }
        txn.isLive = false
        // Committing (not aborting) a read-only transaction keeps the database handles it opened.
        try check(mdb_txn_commit(raw), "mdb_txn_commit", context: path)
        return .done(value)
      }
    }
  }

  /// Runs `body` in a write transaction and commits it; aborts it if `body` throws.
  ///
  /// `body` is synchronous, so the transaction begins and ends on one thread and never spans an
  /// `await`. When the map is full, the transaction is aborted, the map grows (doubling, up to
  /// ``Options/maximumMapSize``) and `body` runs again from the start: it must not have effects
  /// outside the transaction that a second run would repeat.
  /// - Throws: ``LMDBError`` (`mapFull` once the maximum map size is reached, ``LMDBError/Code/closed``
  ///   after ``close()``) or what `body` throws.
  public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
    clearStaleReadersPeriodically()
    return try retrying { () throws -> Attempt<R> in
      try resizeLock.withShared { () throws -> Attempt<R> in
        let raw: OpaquePointer
        do {
          raw = try begin(readOnly: false)
        } catch let error as LMDBError where error.code == .mapResized {
          return .adoptMapSize
        }
        preallocate()
        let txn = WriteTransaction(handle: raw, environment: self)
        do {
          let value = try body(txn)
          txn.isLive = false
          let rc = mdb_txn_commit(raw)  // frees the transaction, whether it succeeds or not
          if rc == MDB_MAP_FULL { return .growMap }
          if Self.isWriteFailure(rc) {
            txn.hitWriteFailure = true
            throw writeFailure(rc, operation: "mdb_txn_commit", context: path)
          }
          try check(rc, "mdb_txn_commit", context: path)
          return .done(value)
        } catch {
          if txn.isLive {
            txn.isLive = false
            mdb_txn_abort(raw)
          }
          if txn.hitMapFull { return .growMap }
          if txn.hitWriteFailure { trimAfterFailedWrite() }
          throw error
        }
      }
    }
  }
}
