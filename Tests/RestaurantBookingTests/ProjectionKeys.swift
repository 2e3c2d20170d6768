import EventLog
import Foundation

/// The byte keys of the domain's projection tables, in `TableKey`'s public encodings (LMDB sorts
/// keys bytewise, so each order the app reads in is a key layout), written out for the tests that
/// check the stored layout or write a table by hand.
enum ProjectionKeys {
  /// 16 bytes: the UUID's bytes (sorts as its string does).
  static func id(_ id: UUID) -> [UInt8] { TableKey.uuid(id).bytes }

  /// A restaurant's `by-name` entry: the lower-cased name's UTF-8 (its first
  /// ``TableKey/maximumTextBytes``), `0x00`, then the ID's 16 bytes.
  static func name(_ name: String, id: UUID) -> [UInt8] { TableKey(.caseInsensitive(name), .uuid(id)).bytes }

  /// A booking's `by-date` entry: the sortable date (8 bytes), then the ID's 16 bytes.
  static func date(_ date: Date, id: UUID) -> [UInt8] { TableKey(.date(date), .uuid(id)).bytes }
}
