import EventLog

extension EventLogProgram {
  /// One line for any error, naming what it concerns.
  ///
  /// A stream named in an ``EventStoreError`` is shown as ``AppSchema/StreamNames/displayed`` shows it.
  static func describe(_ error: any Error, streams: AppSchema.StreamNames = .verbatim) -> String {
    if case .wrongExpectedVersion(let stream, let expected, let actual) = error as? EventStoreError {
      return "stream '\(streams.displayed(stream))' expected \(expected) but is at version \(actual)"
    }
    return String(describing: error)
  }
}
