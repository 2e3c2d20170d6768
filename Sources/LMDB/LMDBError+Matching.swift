#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension LMDBError: LocalizedError {
  /// The description: `LocalizedError`'s text is the same sentence.
  public var errorDescription: String? { description }
}

extension LMDBError.Code {
  /// Whether `error` is an ``LMDBError`` with this code, or wraps one (an error of a layer above
  /// whose ``LMDBWrapping/lmdbError`` is one): `catch LMDBError.Code.mapFull { … }`.
  public static func ~= (code: LMDBError.Code, error: any Error) -> Bool {
    if let error = error as? LMDBError { return error.code == code }
    return (error as? any LMDBWrapping)?.lmdbError?.code == code
  }
}

/// An error of a layer above LMDB that may carry an ``LMDBError`` (the event store's storage
/// failures), so that `catch LMDBError.Code.noSpace` matches it too.
public protocol LMDBWrapping: Error {
  /// The LMDB error this error carries, if any.
  var lmdbError: LMDBError? { get }
}
