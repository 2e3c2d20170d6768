/// Byte arrays of an exact size, built on hot paths (replay's keys and rows).
package enum ExactSizeBytes {
  /// A byte array of exactly `count` bytes, all written by `body`.
  ///
  /// `body` writes into scratch memory (on the stack for small sizes), which is then copied into
  /// the array. That is faster than `[UInt8](unsafeUninitializedCapacity:initializingWith:)` in
  /// this toolchain: that initializer allocates through the unspecialised array buffer, which
  /// looks up `_ContiguousArrayStorage<UInt8>`'s metadata in the runtime's locked cache on every
  /// call (about 14 ns of 37 per 24-byte array here), and two threads allocating at once contend
  /// for that lock. Copying from a buffer takes the specialised path (about 24 ns).
  /// - Precondition: `body` initializes all `count` bytes.
  @inlinable
  package static func make(
    count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Void
  ) rethrows -> [UInt8] {
    try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
      try body(UnsafeMutableRawBufferPointer(scratch))
      return Array(UnsafeBufferPointer(scratch))
    }
  }

  /// A copy of `bytes`.
  @inlinable
  package static func copy(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    Array(bytes.assumingMemoryBound(to: UInt8.self))
  }
}
