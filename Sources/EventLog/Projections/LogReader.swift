import LMDB

/// The log as a fold reads it back: the events of given sequence numbers, for a
/// ``TableProjection`` with updates that folds a row's events again in stamp order.
///
/// Inside a transaction (the writer's, or the read transaction of a comparison) it reads there;
/// a replay's fold thread holds none, and reads in a read transaction of its own. Not `Sendable`:
/// it lives in the ``ProjectionState`` of one fold.
final class LogReader {
  enum Source {
    /// The transaction the fold runs in.
    case transaction(Transaction)
    /// A read transaction of its own per call (the fold holds none).
    case environment(Environment)
  }

  var source: Source
  let schema: Schema

  init(_ source: Source, schema: Schema) {
    self.source = source
    self.schema = schema
  }

  /// The events stored at `sequences`, in that order, verified as every read of the log is.
  /// - Throws: ``EventStoreError/corruptedRecord(sequence:reason:)`` for a damaged record or one
  ///   that is not stored; a storage error.
  func events(at sequences: [UInt64]) throws -> [RecordedEvent] {
    switch source {
    case .transaction(let txn): return try read(sequences, in: txn)
    case .environment(let environment):
      return try storage { try environment.read { try read(sequences, in: $0) } }
    }
  }

  private func read(_ sequences: [UInt64], in txn: Transaction) throws -> [RecordedEvent] {
    try sequences.map { sequence in
      let event = try withUnsafeBytes(of: sequence) { key in
        try txn.withValue(forKey: key, in: schema.events) { try RecordCodec.decode($0, sequence: sequence) }
      }
      guard let event else {
        throw EventStoreError.corruptedRecord(
          sequence: sequence, reason: "a projection lists it, but it is not stored")
      }
      return event
    }
  }
}

@available(*, unavailable)
extension LogReader: Sendable {}
