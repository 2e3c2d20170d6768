/// A row of a ``TableProjection``: how it is stored.
///
/// A `Codable` row needs nothing more: it is stored in the package's binary format
/// (`BinaryEncoder`, positional). The environment records its layout: an optional field added
/// without a new version reads as `nil` in the rows stored before; any other change of its
/// fields needs the projection's version raised, which rebuilds it on open (an open refuses it
/// otherwise).
///
/// ```swift
/// struct User: Identifiable, Hashable, Codable, TableRow { … }
/// ```
///
/// A row can instead write and read its fields itself with ``RowWriter`` and ``RowReader``, which
/// does no reflection (the domain's hot rows do); the writer works out the size.
public protocol TableRow: Sendable {
  /// What a row is called in errors (`booking`: "a stored booking row is unreadable: …");
  /// the type's name by default.
  static var rowName: String { get }
  /// Writes the row's fields.
  /// - Throws: when the row cannot be stored (a `Codable` row with a dictionary).
  func write(to writer: inout RowWriter) throws
  /// Reads a row that ``write(to:)`` wrote.
  /// - Throws: ``RowError`` (or the binary decoder's error) for bytes that do not read back.
  init(from reader: inout RowReader) throws
}

extension TableRow {
  /// The type's name, as `String(describing:)` writes it.
  public static var rowName: String { String(describing: Self.self) }

  /// Reads a row from its stored bytes, checking that every byte was read.
  @inlinable
  public init(storedBytes bytes: UnsafeRawBufferPointer) throws {
    var reader = RowReader(bytes, row: Self.rowName)
    try self.init(from: &reader)
    try reader.finish()
  }

  /// Reads a row of a live view, whose dates an environment of format 3 or older opened
  /// read-only holds as the seconds since 1970 (``RowReader/date()``).
  @inlinable
  init(storedBytes bytes: UnsafeRawBufferPointer, datesSince1970: Bool) throws {
    var reader = RowReader(bytes, row: Self.rowName)
    reader.datesSince1970 = datesSince1970
    try self.init(from: &reader)
    try reader.finish()
  }

  /// Calls `body` with the row's stored bytes (valid only during the call).
  @inlinable
  public func withStoredBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
    try RowWriter.withRow({ try write(to: &$0) }, body)
  }
}

extension TableRow where Self: Codable {
  /// Writes the row in `BinaryEncoder`'s format.
  public func write(to writer: inout RowWriter) throws {
    writer.bytes(try BinaryEncoder().encode(self))
  }

  /// Reads a row in `BinaryDecoder`'s format: the rest of the bytes. A row stored in an earlier
  /// layout of the type that its environment recorded (an optional field added since, or one a
  /// newer build added) is rewritten into the type's layout first (`Docs/OnDiskFormat.md`,
  /// "Evolving a type").
  public init(from reader: inout RowReader) throws {
    let bytes = reader.remaining
    do {
      self = try BinaryDecoder().decode(Self.self, from: bytes)
    } catch {
      guard let rewritten = LayoutEvolutions.shared.transcoded(bytes, to: Self.self) else { throw error }
      self = try BinaryDecoder().decode(Self.self, from: rewritten)
    }
    try reader.skip(bytes.count)
  }
}
