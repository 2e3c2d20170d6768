/// Validation of stored text: record fields and payload strings must be well-formed UTF-8.
enum UTF8Validation {
  /// Whether `bytes` hold only ASCII, checked eight bytes at a time.
  @inline(__always)
  static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    while bytes.count &- index >= 8 {
      if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
        return false
      }
      index &+= 8
    }
    while index < bytes.count {
      if bytes[index] & 0x80 != 0 { return false }
      index &+= 1
    }
    return true
  }

  /// `bytes` as a `String` when they are valid UTF-8, `nil` otherwise. ASCII (every stored stream
  /// ID, type name and origin in practice) takes the fast path; anything else goes through the
  /// standard library's validation.
  static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
    if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
  }

  /// Whether `bytes` are valid UTF-8.
  static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
    isASCII(bytes) || String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self) != nil
  }
}
