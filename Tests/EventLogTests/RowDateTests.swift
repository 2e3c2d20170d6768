import EventLog
import Foundation
import TestKit
import Testing

/// Row dates (`RowWriter.date`, `RowReader.date`) come back identical, as `BinaryEncoder`'s bytes.
@Suite("Row dates")
struct RowDateTests {
  @Test("a row date reads back as the identical Date, in BinaryEncoder's bytes (seeded, 100,000 dates)")
  func roundTrip() throws {
    var rng = SplitMix64(seed: 0x20_22)
    let now = Date().timeIntervalSinceReferenceDate
    for index in 0..<100_000 {
      let date: Date
      switch index % 4 {
      case 0: date = Date(timeIntervalSinceReferenceDate: now + Double.random(in: -1e6...1e6, using: &rng))
      case 1: date = Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &rng))
      case 2: date = Date(microsecondsSince1970: Int64.random(in: 0...4_000_000_000_000_000, using: &rng))
      default: date = Date(timeIntervalSinceReferenceDate: Double(bitPattern: rng.next()))
      }
      let bytes = try RowWriter.withRow({ $0.date(date) }, { Array($0) })
      #expect(bytes == (try BinaryEncoder().encode(date)))
      let read = try bytes.withUnsafeBytes { buffer throws(RowError) in
        var reader = RowReader(buffer, row: "test")
        let date = try reader.date()
        try reader.finish()
        return date
      }
      #expect(
        read.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern,
        "\(date.timeIntervalSinceReferenceDate)")
    }
  }
}
