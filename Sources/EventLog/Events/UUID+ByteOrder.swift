import Foundation

extension UUID {
  /// The UUID's bytes 0–7 and 8–15 as big-endian numbers: compared as a pair, they order UUIDs as
  /// their bytes do (the order of LMDB's keys, and of stamps with equal times).
  package var byteOrder: (high: UInt64, low: UInt64) {
    withUnsafeBytes(of: uuid) {
      (
        UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      )
    }
  }
}
