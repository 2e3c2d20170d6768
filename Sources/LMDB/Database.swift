import CLMDB

/// A handle to a named database (LMDB's "DBI") inside an ``Environment``.
///
/// Handles are opened once, by ``Environment/openDatabase(_:flags:)``, and stay valid for the
/// environment's lifetime; they are plain values that any thread may use in its transactions.
public struct Database: Hashable, Sendable, CustomStringConvertible {
  let handle: MDB_dbi
  /// The database's name; `nil` for the unnamed main database.
  public let name: String?
  /// The flags it was opened with.
  public let flags: Flags

  /// Options of a database, fixed when it is created.
  public struct Flags: OptionSet, Hashable, Sendable {
    /// The `MDB_*` flag bits, as `mdb_dbi_open` takes them.
    public let rawValue: UInt32
    /// Creates flags from their `MDB_*` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Create the database if it does not exist (`MDB_CREATE`).
    public static let create = Flags(rawValue: UInt32(MDB_CREATE))
    /// Keys are native-endian unsigned integers of 4 or 8 bytes, sorted numerically (`MDB_INTEGERKEY`).
    public static let integerKeys = Flags(rawValue: UInt32(MDB_INTEGERKEY))
    /// Several sorted values per key (`MDB_DUPSORT`).
    public static let duplicateSort = Flags(rawValue: UInt32(MDB_DUPSORT))
    /// With ``duplicateSort``: all values of a key have the same size (`MDB_DUPFIXED`).
    public static let duplicateFixed = Flags(rawValue: UInt32(MDB_DUPFIXED))
  }

  /// The database's name, or `<main>` for the unnamed main database.
  public var description: String { name ?? "<main>" }
}
