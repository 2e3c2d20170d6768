import LMDB

extension EventStoreError {
  /// The kind of an ``EventStoreError`` without its context: what a `catch` can match on its own.
  ///
  /// ```swift
  /// catch EventStoreError.Code.wrongExpectedVersion { … }
  /// ```
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The case's name, `wrongExpectedVersion`.
    public let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// ``EventStoreError/wrongExpectedVersion(stream:expected:actual:)``.
    public static let wrongExpectedVersion = Code("wrongExpectedVersion")
    /// ``EventStoreError/corruptedRecord(sequence:reason:)``.
    public static let corruptedRecord = Code("corruptedRecord")
    /// ``EventStoreError/invalidStream(_:reason:)``.
    public static let invalidStream = Code("invalidStream")
    /// ``EventStoreError/emptyAppend``.
    public static let emptyAppend = Code("emptyAppend")
    /// ``EventStoreError/duplicateEventInAppend(id:)``.
    public static let duplicateEventInAppend = Code("duplicateEventInAppend")
    /// ``EventStoreError/partiallyStoredAppend(id:sequence:)``.
    public static let partiallyStoredAppend = Code("partiallyStoredAppend")
    /// ``EventStoreError/invalidEvent(id:reason:)``.
    public static let invalidEvent = Code("invalidEvent")
    /// ``EventStoreError/eventTypeMismatch(sequence:expected:actual:)``.
    public static let eventTypeMismatch = Code("eventTypeMismatch")
    /// ``EventStoreError/unsupportedSchemaVersion(type:version:supported:)``.
    public static let unsupportedSchemaVersion = Code("unsupportedSchemaVersion")
    /// ``EventStoreError/payloadDecoding(sequence:type:underlying:)``.
    public static let payloadDecoding = Code("payloadDecoding")
    /// ``EventStoreError/projectionFailed(projection:sequence:underlying:)``.
    public static let projectionFailed = Code("projectionFailed")
    /// ``EventStoreError/invalidProjection(_:)``.
    public static let invalidProjection = Code("invalidProjection")
    /// ``EventStoreError/unsupportedFormat(path:found:supported:)``.
    public static let unsupportedFormat = Code("unsupportedFormat")
    /// ``EventStoreError/readOnly(path:)``.
    public static let readOnly = Code("readOnly")
    /// ``EventStoreError/unexpectedHead(path:expected:actual:)``.
    public static let unexpectedHead = Code("unexpectedHead")
    /// ``EventStoreError/invalidState(key:reason:)``.
    public static let invalidState = Code("invalidState")
    /// ``EventStoreError/closed``.
    public static let closed = Code("closed")
    /// ``EventStoreError/storage(_:)``.
    public static let storage = Code("storage")

    /// The case's name, ``rawValue``.
    public var description: String { rawValue }

    /// Whether `error` is an ``EventStoreError`` of this code: `catch EventStoreError.Code.closed`.
    public static func ~= (code: Code, error: any Error) -> Bool {
      (error as? EventStoreError)?.code == code
    }
  }

  /// The error's kind, without its context.
  public var code: Code {
    switch self {
    case .wrongExpectedVersion: .wrongExpectedVersion
    case .corruptedRecord: .corruptedRecord
    case .invalidStream: .invalidStream
    case .emptyAppend: .emptyAppend
    case .duplicateEventInAppend: .duplicateEventInAppend
    case .partiallyStoredAppend: .partiallyStoredAppend
    case .invalidEvent: .invalidEvent
    case .eventTypeMismatch: .eventTypeMismatch
    case .unsupportedSchemaVersion: .unsupportedSchemaVersion
    case .payloadDecoding: .payloadDecoding
    case .projectionFailed: .projectionFailed
    case .invalidProjection: .invalidProjection
    case .unsupportedFormat: .unsupportedFormat
    case .readOnly: .readOnly
    case .unexpectedHead: .unexpectedHead
    case .invalidState: .invalidState
    case .closed: .closed
    case .storage: .storage
    }
  }
}

extension EventStoreError: LMDBWrapping {
  /// The LMDB error of ``storage(_:)``, or of a projection failure caused by one.
  public var lmdbError: LMDBError? {
    switch self {
    case .storage(let error): error
    case .projectionFailed(_, _, let underlying), .payloadDecoding(_, _, let underlying):
      (underlying as? LMDBError) ?? (underlying as? EventStoreError)?.lmdbError
    default: nil
    }
  }
}
