import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An error reported by LMDB, with the operation that failed and what it was working on.
///
/// Every call into the C API goes through ``check(_:_:context:)``, so every failure carries
/// LMDB's code, the name of the C function, `mdb_strerror`'s message and, where known, the path
/// or database involved.
public struct LMDBError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A typed LMDB (or `errno`) result code.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The raw value as LMDB returned it: one of LMDB's negative codes or a positive `errno`.
    public let rawValue: Int32

    /// Creates a code from LMDB's raw value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Key/data pair already exists (`MDB_KEYEXIST`).
    public static let keyExists = Code(rawValue: MDB_KEYEXIST)
    /// No matching key/data pair found (`MDB_NOTFOUND`).
    public static let notFound = Code(rawValue: MDB_NOTFOUND)
    /// Requested page not found: usually a damaged file (`MDB_PAGE_NOTFOUND`).
    public static let pageNotFound = Code(rawValue: MDB_PAGE_NOTFOUND)
    /// Located page was the wrong type: a damaged file (`MDB_CORRUPTED`).
    public static let corrupted = Code(rawValue: MDB_CORRUPTED)
    /// Update of meta page failed or environment had a fatal error (`MDB_PANIC`).
    public static let panic = Code(rawValue: MDB_PANIC)
    /// Environment version mismatch (`MDB_VERSION_MISMATCH`).
    public static let versionMismatch = Code(rawValue: MDB_VERSION_MISMATCH)
    /// The file is not a valid LMDB file (`MDB_INVALID`).
    public static let invalid = Code(rawValue: MDB_INVALID)
    /// Environment map size reached (`MDB_MAP_FULL`).
    public static let mapFull = Code(rawValue: MDB_MAP_FULL)
    /// Environment maximum number of databases reached (`MDB_DBS_FULL`).
    public static let databasesFull = Code(rawValue: MDB_DBS_FULL)
    /// Environment maximum number of readers reached (`MDB_READERS_FULL`).
    public static let readersFull = Code(rawValue: MDB_READERS_FULL)
    /// Transaction has too many dirty pages (`MDB_TXN_FULL`).
    public static let transactionFull = Code(rawValue: MDB_TXN_FULL)
    /// Another process grew the map beyond this process's mapping (`MDB_MAP_RESIZED`).
    public static let mapResized = Code(rawValue: MDB_MAP_RESIZED)
    /// The operation and the database flags do not match (`MDB_INCOMPATIBLE`).
    public static let incompatible = Code(rawValue: MDB_INCOMPATIBLE)
    /// The transaction must be aborted: an earlier operation failed (`MDB_BAD_TXN`).
    public static let badTransaction = Code(rawValue: MDB_BAD_TXN)
    /// Key or data too large or of the wrong size (`MDB_BAD_VALSIZE`).
    public static let badValueSize = Code(rawValue: MDB_BAD_VALSIZE)
    /// No such file or directory (`ENOENT`).
    public static let noSuchFile = Code(rawValue: 2)
    /// Permission denied (`EACCES`).
    public static let permissionDenied = Code(rawValue: 13)
    /// No space left on device (`ENOSPC`): the disk holding the environment is full.
    public static let noSpace = Code(rawValue: ENOSPC)
    /// A path is a symbolic link where a regular file must be (`ELOOP`).
    public static let symbolicLink = Code(rawValue: ELOOP)
    /// A file has more than one hard link (`EMLINK`).
    public static let tooManyLinks = Code(rawValue: EMLINK)
    /// A path is not of the kind required: not a directory, not a regular file (`EINVAL`).
    public static let wrongFileType = Code(rawValue: EINVAL)
    /// Another process has the environment open, where the operation needs it alone (`EBUSY`).
    public static let busy = Code(rawValue: EBUSY)
    /// A directory that group or others can write to (`EPERM`).
    public static let unsafePermissions = Code(rawValue: EPERM)
    /// The environment was closed (``Environment/close()``) before the call: the wrapper's own
    /// code, outside LMDB's range and `errno`'s.
    public static let closed = Code(rawValue: -30_000)

    /// LMDB's own description of the code (`mdb_strerror`); the wrapper's for ``closed``.
    public var description: String {
      self == .closed ? "environment closed" : String(cString: mdb_strerror(rawValue))
    }
  }

  /// What LMDB answered.
  public let code: Code
  /// The C function that failed, for example `mdb_put`.
  public let operation: String
  /// `mdb_strerror`'s message for ``code``.
  public let message: String
  /// What the operation was working on: a path, a database name, a key; empty when unknown.
  public let context: String
  /// What went wrong in the user's terms, when the wrapper knows more than LMDB's code says (a
  /// refused file, a full disk), naming the path; empty otherwise. It is then the description.
  public let explanation: String

  /// Creates an error for a failed operation.
  /// - Parameters:
  ///   - code: LMDB's result code; the message is `mdb_strerror`'s for it.
  ///   - operation: the C function that failed, for example `mdb_put`.
  ///   - context: what the operation was working on (a path, a database name, a key); empty when
  ///     unknown.
  ///   - explanation: a sentence naming the cause and the path, shown instead of the C-level
  ///     description; empty to show that.
  public init(code: Code, operation: String, context: String = "", explanation: String = "") {
    self.code = code
    self.operation = operation
    self.message = code.description
    self.context = context
    self.explanation = explanation
  }

  /// The C-level description: `LMDB mdb_put failed: … (code 5) [event_ids]`.
  public var technicalDescription: String {
    let base = "LMDB \(operation) failed: \(message) (code \(code.rawValue))"
    return context.isEmpty ? base : "\(base) [\(context)]"
  }

  /// The ``explanation`` when there is one, else the ``technicalDescription``.
  public var description: String { explanation.isEmpty ? technicalDescription : explanation }
}

/// Throws an ``LMDBError`` unless `result` is `MDB_SUCCESS`.
///
/// The one function every C call's result goes through.
@inline(__always)
func check(
  _ result: Int32, _ operation: StaticString, context: @autoclosure () -> String = ""
) throws(LMDBError) {
  if _slowPath(result != 0) {
    throw LMDBError(code: .init(rawValue: result), operation: "\(operation)", context: context())
  }
}
