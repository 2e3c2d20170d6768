/// Helpers shared by the binary encoder and decoder.
package enum BinaryCodingSupport {
  /// Appends `key` to a shared coding-path stack after dropping entries deeper than `depth`.
  ///
  /// Containers remember only their depth; the path of the value being coded lives on one stack in the
  /// encoder or decoder state. Stale entries (left by nested containers, which cannot pop) are trimmed here.
  @inline(__always)
  static func pushCodingKey(_ key: some CodingKey, onto path: inout [any CodingKey], depth: Int) {
    if path.count > depth {
      path.removeLast(path.count - depth)
    }
    path.append(key)
  }

  /// Drops the entries of a shared coding-path stack deeper than `depth`.
  @inline(__always)
  static func popCodingKeys(from path: inout [any CodingKey], depth: Int) {
    if path.count > depth {
      path.removeLast(path.count - depth)
    }
  }

  /// The first `depth` entries of a shared coding-path stack (all of them if it is shorter).
  static func codingPathPrefix(_ path: [any CodingKey], depth: Int) -> [any CodingKey] {
    path.count > depth ? Array(path.prefix(depth)) : path
  }

  /// The size of `count` bytes written with their length in front (a LEB128 varint, as
  /// `BinaryEncodingState.writeLengthPrefixed` writes them).
  package static func lengthPrefixedSize(_ count: Int) -> Int {
    var size = 1
    var rest = UInt64(count) >> 7
    while rest != 0 {
      size += 1
      rest >>= 7
    }
    return size + count
  }

  /// The identity of `[UInt8]`'s metatype, looked up once: comparing against `[UInt8].self` directly would
  /// instantiate the generic metadata on every call.
  static let byteArrayTypeID = ObjectIdentifier([UInt8].self)

  /// Whether two byte buffers have the same length and contents (compared eight bytes at a time).
  package static func bytesEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    let count = lhs.count
    guard count == rhs.count else { return false }
    var index = 0
    while count &- index >= 8 {
      let left = lhs.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      guard left == rhs.loadUnaligned(fromByteOffset: index, as: UInt64.self) else { return false }
      index &+= 8
    }
    while index < count {
      guard lhs[index] == rhs[index] else { return false }
      index &+= 1
    }
    return true
  }

  /// Returns `value` as type `T`, which the caller has just established is `Source` itself.
  ///
  /// The coders special-case a few types inside generic code (`if T.self == UUID.self`). Converting the
  /// concrete result back to `T` with `as? T` would go through the dynamic-cast runtime and instantiate
  /// `Optional<T>` metadata on every call; when the two types are the same, a bit cast is exact and free.
  @inline(__always)
  package static func identityCast<Source, T>(_ value: Source, to type: T.Type) -> T {
    precondition(Source.self == T.self, "identityCast between different types")
    return unsafeBitCast(value, to: T.self)
  }
}
