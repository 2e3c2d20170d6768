/// Validation of stored text: record fields and payload strings must be well-formed UTF-8.
package enum UTF8Validation {
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
  package static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
    if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
  }

  /// Whether `bytes` are well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no
  /// surrogates, nothing above U+10FFFF), checked in place: unlike `String(validating:)`, it
  /// allocates nothing.
  /// - Complexity: O(n); runs of ASCII are checked eight bytes at a time.
  package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let count = bytes.count
    var index = 0
    while index < count {
      if count &- index >= 8,
        bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
      {
        index &+= 8
        continue
      }
      if bytes[index] < 0x80 {
        index &+= 1
        continue
      }
      guard let length = sequenceLength(bytes, at: index) else { return false }
      index &+= length
    }
    return true
  }

  /// The length of the well-formed multi-byte sequence that begins at `index` (Unicode 15,
  /// table 3-7), or `nil` when none does. `bytes[index]` must be 0x80 or more.
  @inline(__always)
  static func sequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
    // The length of the sequence and the range of its second byte; the third and fourth bytes
    // are always 80...BF.
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch bytes[index] {
    case 0xC2...0xDF: length = 2
    case 0xE0: (length, low) = (3, 0xA0)
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: (length, high) = (3, 0x9F)
    case 0xF0: (length, low) = (4, 0x90)
    case 0xF1...0xF3: length = 4
    case 0xF4: (length, high) = (4, 0x8F)
    default: return nil
    }
    guard bytes.count &- index >= length else { return nil }
    let second = bytes[index &+ 1]
    guard second >= low, second <= high else { return nil }
    var next = index &+ 2
    while next < index &+ length {
      guard bytes[next] & 0xC0 == 0x80 else { return nil }
      next &+= 1
    }
    return length
  }
}
