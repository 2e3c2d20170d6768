/// Why a low-level read failed; turned into a `DecodingError` with the coding path by the container.
package struct BinaryReadFailure: Error {
  /// The kinds of malformed input.
  enum Reason {
    case endOfData
    case invalidBool(UInt8)
    case invalidOptionalTag(UInt8)
    case varintTooLong
    case varintOverflow
    case nonCanonicalVarint
    case valueOutOfRange(UInt64)
    case lengthExceedsData(UInt64, available: Int)
    case invalidUTF8
    case tooDeep(Int)
  }

  /// The byte offset, from the start of the decoded buffer, where the offending item starts.
  let offset: Int
  /// What was wrong.
  let reason: Reason
  /// What was being read, for example `"String"`.
  let subject: StaticString

  /// A human-readable explanation including the byte offset.
  var message: String {
    switch reason {
    case .endOfData:
      return "unexpected end of data at byte \(offset) while reading \(subject)"
    case .invalidBool(let byte):
      return "invalid Bool byte \(byte) at byte \(offset) (expected 0 or 1)"
    case .invalidOptionalTag(let byte):
      return "invalid optional tag \(byte) at byte \(offset) while reading \(subject) (expected 0 or 1)"
    case .varintTooLong:
      return "varint longer than 10 bytes at byte \(offset) while reading \(subject)"
    case .varintOverflow:
      return "varint at byte \(offset) overflows 64 bits while reading \(subject)"
    case .nonCanonicalVarint:
      return "non-canonical (over-long) varint at byte \(offset) while reading \(subject)"
    case .valueOutOfRange(let raw):
      return "value (raw varint \(raw)) at byte \(offset) does not fit in \(subject)"
    case .lengthExceedsData(let length, let available):
      return "declared length \(length) at byte \(offset) exceeds the \(available) remaining bytes "
        + "while reading \(subject)"
    case .invalidUTF8:
      return "invalid UTF-8 in the \(subject) bytes at byte \(offset)"
    case .tooDeep(let limit):
      return "nesting deeper than \(limit) levels at byte \(offset) while reading \(subject)"
    }
  }
}
