import LMDB

/// The log as a fold reads it back: the events of given streams, for a ``TableProjection`` with
/// updates that folds a row's events again in stamp order.
///
/// Inside a transaction (the writer's, or the read transaction of a comparison) it reads there;
/// a replay's fold thread holds none, and reads in a read transaction of its own. Not `Sendable`:
/// it lives in the ``ProjectionWriter`` of one fold.
final class LogReader {
  enum Source {
    /// The transaction the fold runs in.
    case transaction(Transaction)
    /// A read transaction of its own per call (the fold holds none).
    case environment(Environment)
  }

  var source: Source
  let schema: Schema
  /// Turns a payload stored as JSON into binary, as every fold does before a projection sees it.
  let payloads: PayloadForms

  init(_ source: Source, schema: Schema, payloads: PayloadForms) {
    self.source = source
    self.schema = schema
    self.payloads = payloads
  }

  /// The events of `streams` (their UTF-8 names) stored before `sequence`, except those the
  /// projections skip (``SkippedEvent``, or a JSON payload nothing here reads), stream by stream in
  /// version order, their payloads in binary.
  func events(inStreams streams: [[UInt8]], before sequence: UInt64) throws -> [RecordedEvent] {
    switch source {
    case .transaction(let txn): return try read(streams, before: sequence, in: txn)
    case .environment(let environment):
      return try storage { try environment.read { try read(streams, before: sequence, in: $0) } }
    }
  }

  private func read(_ streams: [[UInt8]], before last: UInt64, in txn: Transaction) throws -> [RecordedEvent]
  {
    var sequences: [UInt64] = []
    try txn.withCursor(in: schema.streamEvents) { cursor in
      for stream in streams {
        guard try stream.withUnsafeBytes({ try cursor.seek($0, exact: true) }) else { continue }
        var found = true
        while found {
          let sequence = Schema.parseStreamEntry(cursor.value).sequence
          if sequence < last { sequences.append(sequence) }
          found = try cursor.move(.nextDuplicate)
        }
      }
    }
    if let skipped = schema.skipped {
      sequences = try sequences.filter { sequence in
        try withUnsafeBytes(of: sequence) { try txn.withValue(forKey: $0, in: skipped) { _ in true } } == nil
      }
    }
    return try read(sequences, in: txn)
  }

  /// The events stored at `sequences`, verified as every read of the log is, with binary
  /// payloads (one stored as JSON is converted, or left out when nothing here reads it, as the
  /// fold that met it left it out).
  private func read(_ sequences: [UInt64], in txn: Transaction) throws -> [RecordedEvent] {
    try sequences.compactMap { sequence in
      let event = try withUnsafeBytes(of: sequence) { key in
        try txn.withValue(forKey: key, in: schema.events) { try RecordCodec.decode($0, sequence: sequence) }
      }
      guard let event else {
        throw EventStoreError.corruptedRecord(
          sequence: sequence, reason: "indexed by its stream but not stored")
      }
      return event.payloadEncoding == .binary ? event : payloads.binaryForm(of: event, in: txn).event
    }
  }
}

@available(*, unavailable)
extension LogReader: Sendable {}
