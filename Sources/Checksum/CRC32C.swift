import CCRC32C

/// CRC-32C (Castagnoli) checksums: with the processor's CRC-32C instruction where there is one
/// (SSE 4.2 on x86-64, the ARMv8 CRC extension when the compiler targets it), otherwise in Swift
/// with slicing-by-8 tables. Both give the same results.
///
/// The parameters are those of iSCSI, ext4, LevelDB and RocksDB: reflected polynomial `0x82F63B78`, initial
/// value `0xFFFFFFFF`, final XOR `0xFFFFFFFF`. The checksum of the ASCII bytes `"123456789"` is `0xE3069283`.
///
/// A checksum can be computed in pieces: passing the result for a prefix as `previous` continues it, so
/// `checksum(b, continuing: checksum(a)) == checksum(a + b)`. The default `previous` of `0` starts afresh.
///
/// The table loop consumes eight bytes per iteration with unaligned little-endian loads and eight
/// table look-ups (well over 1 GB/s in optimized builds); the instruction is several times faster,
/// which matters to replay, where checking each record's checksum was a quarter of the reading
/// thread's time.
public enum CRC32C {
  /// The reflected Castagnoli polynomial.
  static let polynomial: UInt32 = 0x82F6_3B78

  /// Eight 256-entry tables, laid out one after another (`tables[k * 256 + byte]`).
  ///
  /// Table 0 is the classic byte-at-a-time table; table `k` advances a byte's contribution by `k` further
  /// zero bytes, which lets the bulk loop fold eight input bytes at once.
  static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 {
        crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1
      }
      tables[byte] = crc
    }
    for slice in 1..<8 {
      for byte in 0..<256 {
        let previous = tables[(slice - 1) * 256 + byte]
        tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  /// Computes the CRC-32C of the bytes in a raw buffer, optionally continuing an earlier checksum.
  ///
  /// The buffer may start at any address; no alignment is assumed.
  ///
  /// - Parameters:
  ///   - buffer: The bytes to checksum. An empty buffer returns `previous` unchanged.
  ///   - previous: The checksum of the bytes that precede `buffer`, or `0` to start a new checksum.
  /// - Returns: The checksum of the preceding bytes followed by `buffer`.
  /// - Complexity: O(*n*), where *n* is `buffer.count`.
  public static func checksum(_ buffer: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
    if isHardwareAccelerated {
      guard let base = buffer.baseAddress else { return previous }
      return ~ccrc32c_hardware_update(~previous, base, buffer.count)
    }
    return softwareChecksum(buffer, continuing: previous)
  }

  /// Whether ``checksum(_:continuing:)`` uses the processor's instruction.
  public static let isHardwareAccelerated = ccrc32c_hardware_available() != 0

  /// The checksum computed with the tables, whatever the processor (``checksum(_:continuing:)``
  /// gives the same result; tests compare the two).
  static func softwareChecksum(_ buffer: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
    tables.withUnsafeBufferPointer { table in
      update(~previous, buffer, table)
    }
  }

  /// Computes the CRC-32C of a sequence of bytes, optionally continuing an earlier checksum.
  ///
  /// Contiguous collections such as `[UInt8]`, `ArraySlice<UInt8>` and `Data` are checksummed in place by
  /// the raw-buffer overload; other sequences are processed a byte at a time.
  ///
  /// - Parameters:
  ///   - bytes: The bytes to checksum.
  ///   - previous: The checksum of the bytes that precede `bytes`, or `0` to start a new checksum.
  /// - Returns: The checksum of the preceding bytes followed by `bytes`.
  /// - Complexity: O(*n*), where *n* is the number of bytes in the sequence.
  public static func checksum<Bytes: Sequence<UInt8>>(
    _ bytes: Bytes, continuing previous: UInt32 = 0
  ) -> UInt32 {
    let contiguous = bytes.withContiguousStorageIfAvailable { elements in
      checksum(UnsafeRawBufferPointer(elements), continuing: previous)
    }
    if let contiguous {
      return contiguous
    }
    return tables.withUnsafeBufferPointer { table in
      var crc = ~previous
      for byte in bytes {
        crc = (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)]
      }
      return ~crc
    }
  }

  /// Advances the register `crc` (already inverted) over `buffer` and returns the finalized checksum.
  ///
  /// Eight bytes at a time through the sliced tables, then byte-wise for the tail.
  @inline(__always)
  private static func update(
    _ crc: UInt32, _ buffer: UnsafeRawBufferPointer, _ table: UnsafeBufferPointer<UInt32>
  ) -> UInt32 {
    var crc = crc
    var offset = 0
    let count = buffer.count
    while count - offset >= 8 {
      let low = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ crc
      let high = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
      let lowPart =
        table[0x700 | Int(low & 0xFF)] ^ table[0x600 | Int((low >> 8) & 0xFF)]
        ^ table[0x500 | Int((low >> 16) & 0xFF)] ^ table[0x400 | Int(low >> 24)]
      let highPart =
        table[0x300 | Int(high & 0xFF)] ^ table[0x200 | Int((high >> 8) & 0xFF)]
        ^ table[0x100 | Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
      crc = lowPart ^ highPart
      offset &+= 8
    }
    while offset < count {
      crc = (crc >> 8) ^ table[Int((crc ^ UInt32(buffer[offset])) & 0xFF)]
      offset &+= 1
    }
    return ~crc
  }
}
