import EventLog
import TestKit
import Testing

@testable import Checksum

@Suite("CRC32C")
struct CRC32CTests {
  @Test("known check values")
  func knownVectors() {
    #expect(CRC32C.checksum([UInt8]()) == 0)
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8](repeating: 0x00, count: 32)) == 0x8A91_36AA)
    #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    // RFC 3720 (iSCSI), B.4: 32 bytes ascending 0x00…0x1F and descending 0x1F…0x00.
    #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
    #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
  }

  @Test("the processor's instruction and the tables agree, at every length and alignment")
  func hardwareAgreesWithTables() {
    let bytes = Self.pseudoRandomBytes(count: 600, seed: 11)
    bytes.withUnsafeBytes { all in
      for start in 0..<8 {
        for length in 0...(all.count - start) where length < 80 || length % 37 == 0 {
          let slice = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
          let software = CRC32C.softwareChecksum(slice)
          #expect(CRC32C.checksum(slice) == software, "start \(start), length \(length)")
          #expect(
            CRC32C.checksum(slice, continuing: 0xDEAD_BEEF)
              == CRC32C.softwareChecksum(slice, continuing: 0xDEAD_BEEF))
        }
      }
    }
    // Every x86-64 processor since 2011 has SSE 4.2: there, the instruction must be in use.
    #if arch(x86_64)
      #expect(CRC32C.isHardwareAccelerated)
    #endif
  }

  @Test("raw buffer overload agrees with the sequence overload")
  func rawBufferOverload() {
    let bytes = Array("123456789".utf8)
    let fromBuffer = bytes.withUnsafeBytes { CRC32C.checksum($0) }
    #expect(fromBuffer == 0xE306_9283)
    #expect(CRC32C.checksum(UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
    #expect(
      CRC32C.checksum(UnsafeRawBufferPointer(start: nil, count: 0), continuing: 0x1234_5678) == 0x1234_5678)
  }

  @Test("non-contiguous sequences take the byte-wise path and agree")
  func nonContiguousSequence() {
    let bytes = Self.pseudoRandomBytes(count: 1000, seed: 7)
    let lazy = bytes.lazy.map { $0 }
    #expect(CRC32C.checksum(lazy) == CRC32C.checksum(bytes))
    #expect(CRC32C.checksum(bytes[3..<997]) == Self.referenceCRC32C(Array(bytes[3..<997])))
  }

  @Test("continuing a checksum equals checksumming the concatenation")
  func continuation() {
    let bytes = Self.pseudoRandomBytes(count: 777, seed: 1)
    let whole = CRC32C.checksum(bytes)
    for split in [0, 1, 7, 8, 9, 63, 64, 65, 400, 776, 777] {
      let first = CRC32C.checksum(bytes[..<split])
      #expect(CRC32C.checksum(bytes[split...], continuing: first) == whole, "split at \(split)")
    }
    // Three pieces, through the raw-buffer overload.
    let threePieces = bytes.withUnsafeBytes { raw in
      let first = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<100]))
      let second = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[100..<101]), continuing: first)
      return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[101...]), continuing: second)
    }
    #expect(threePieces == whole)
  }

  @Test("every length 0…300 at every start offset 0…7 matches a bitwise reference")
  func matchesReferenceAtEveryLengthAndAlignment() {
    let bytes = Self.pseudoRandomBytes(count: 320, seed: 42)
    bytes.withUnsafeBytes { raw in
      for offset in 0...7 {
        for length in 0...300 {
          let slice = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
          let expected = Self.referenceCRC32C(Array(slice))
          let actual = CRC32C.checksum(slice)
          if actual != expected {
            Issue.record("offset \(offset) length \(length): \(actual) != \(expected)")
            return
          }
        }
      }
    }
  }

  @Test("a single flipped bit changes the checksum")
  func singleBitFlip() {
    let bytes = Self.pseudoRandomBytes(count: 64, seed: 3)
    let original = CRC32C.checksum(bytes)
    for bit in 0..<(bytes.count * 8) {
      var flipped = bytes
      flipped[bit / 8] ^= UInt8(1) << (bit % 8)
      #expect(CRC32C.checksum(flipped) != original, "bit \(bit)")
    }
  }
}

// MARK: - Fixtures

// Fixtures are nested in the suite so that their short names cannot clash with other test files.
extension CRC32CTests {
  /// CRC-32C computed one bit at a time straight from the definition (no tables).
  static func referenceCRC32C(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 {
        crc = (crc & 1) == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
      }
    }
    return crc ^ 0xFFFF_FFFF
  }

  /// Deterministic bytes from a SplitMix64 generator.
  static func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
  }
}
