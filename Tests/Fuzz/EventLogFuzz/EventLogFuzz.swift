// The fuzz target for the record decoder (`RecordCodec.decode(_:sequence:)`) and the payload decoder
// (`BinaryDecoder`). libFuzzer supplies `main`, so the fuzz entry point exists only when `.ci/fuzz`
// builds the target (`swift build --sanitize=fuzzer -Xswiftc -DEVENTLOG_FUZZ`, debug, so that
// `@testable import EventLog` works; with the fuzzer sanitizer SwiftPM compiles executables with
// `-parse-as-library`). A normal build compiles the `@main` stub at the bottom instead, which is why
// there is no `main.swift`.
#if EVENTLOG_FUZZ
  @testable import EventLog
  import Foundation

  /// Feeds one input to the decoders. The first byte picks what the rest is:
  ///
  /// | `b[0] % 4` | the rest is decoded as |
  /// |---|---|
  /// | 0 | a stored record, under the sequence number it claims (bytes 8..<16), checksum as given |
  /// | 1 | a stored record whose CRC-32C is rewritten first, so the parser behind the checksum is reached |
  /// | 2 | a `FuzzBooking` payload (`BinaryDecoder`) |
  /// | 3 | a `FuzzShapes` payload (`BinaryDecoder`): every kind of value the format has |
  ///
  /// Properties checked beyond "does not crash": a payload that decodes re-encodes to the same bytes
  /// (the format is canonical), and a record that decodes re-encodes to the same bytes when its
  /// flags, reserved field and texts are canonical.
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = [UInt8](UnsafeBufferPointer(start: data, count: size))
    FuzzHarness.run(input)
    return 0
  }
#else
  /// The normal build's stand-in: points at `.ci/fuzz`.
  @main
  enum EventLogFuzzStub {
    static func main() {
      print("EventLogFuzz is a libFuzzer target; build and run it with .ci/fuzz [SECONDS].")
    }
  }
#endif
