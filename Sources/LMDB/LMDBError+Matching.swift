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
  /// Whether `error` is an ``LMDBError`` with this code: `catch LMDBError.Code.mapFull { … }`.
  public static func ~= (code: LMDBError.Code, error: any Error) -> Bool {
    (error as? LMDBError)?.code == code
  }
}
