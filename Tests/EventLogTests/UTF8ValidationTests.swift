import Testing

@testable import EventLog

/// `UTF8Validation.isValid` checks bytes in place; the standard library's
/// `String(validating:as:)` is the reference it must agree with.
@Suite("UTF-8 validation")
struct UTF8ValidationTests {
  @Test("agrees with the standard library on every sequence of one and two bytes")
  func everyShortSequence() {
    for first in 0...255 {
      #expect(Self.agrees([UInt8(first)]))
      for second in 0...255 {
        #expect(Self.agrees([UInt8(first), UInt8(second)]), "\(first) \(second)")
      }
    }
  }

  @Test("agrees on three- and four-byte sequences: every lead and second byte, edges after them")
  func longerSequences() {
    var disagreements: [[UInt8]] = []
    // The bytes after the second are continuation bytes (80…BF) or not: these cover both sides.
    let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
    for lead in UInt8(0xE0)...0xEF {
      for second in 0...255 {
        for third in edges {
          let bytes = [lead, UInt8(second), third]
          if !Self.agrees(bytes) { disagreements.append(bytes) }
        }
      }
    }
    for lead in UInt8(0xF0)...0xFF {
      for second in 0...255 {
        for third in edges {
          for fourth in edges {
            let bytes = [lead, UInt8(second), third, fourth]
            if !Self.agrees(bytes) { disagreements.append(bytes) }
          }
        }
      }
    }
    #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
  }

  @Test("well-formed and ill-formed text, at every position around the eight-byte ASCII steps")
  func positionsAroundASCIIRuns() {
    let valid: [[UInt8]] = [
      Array("é".utf8), Array("€".utf8), Array("😀".utf8), [0xF4, 0x8F, 0xBF, 0xBF], [0xEF, 0xBF, 0xBF],
    ]
    let invalid: [[UInt8]] = [
      [0xC0, 0x80],  // overlong NUL
      [0xE0, 0x9F, 0xBF],  // overlong three-byte form
      [0xED, 0xA0, 0x80],  // a surrogate
      [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
      [0xF0, 0x9F, 0x98],  // truncated
      [0x80],  // a lone continuation byte
    ]
    for prefix in 0...17 {
      for suffix in [0, 1, 8, 9] {
        let before = [UInt8](repeating: 0x61, count: prefix)
        let after = [UInt8](repeating: 0x62, count: suffix)
        for sequence in valid {
          #expect(Self.isValid(before + sequence + after), "valid \(sequence) after \(prefix)")
        }
        for sequence in invalid {
          #expect(!Self.isValid(before + sequence + after), "invalid \(sequence) after \(prefix)")
        }
      }
    }
    #expect(Self.isValid([]))
  }

  @Test("agrees on random byte strings mixing ASCII and multi-byte sequences")
  func randomStrings() {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    let pieces: [[UInt8]] = [
      Array("abcdefgh".utf8), Array("ß".utf8), Array("中".utf8), Array("🍕".utf8),
      [0x80], [0xC3], [0xF0, 0x90], [0xED, 0x9F, 0xBF], [0xFF],
    ]
    var disagreements: [[UInt8]] = []
    for _ in 0..<20_000 {
      var bytes: [UInt8] = []
      for _ in 0..<Int(next() % 12) {
        let choice = next() % 12
        if choice < UInt64(pieces.count) {
          bytes += pieces[Int(choice)]
        } else {
          bytes.append(UInt8(truncatingIfNeeded: next()))
        }
      }
      if !Self.agrees(bytes) { disagreements.append(bytes) }
    }
    #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
  }

  static func isValid(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { UTF8Validation.isValid($0) }
  }

  static func agrees(_ bytes: [UInt8]) -> Bool {
    isValid(bytes) == (String(validating: bytes, as: UTF8.self) != nil)
  }
}
