// The fuzz target for the record decoder (`RecordCodec.decode(_:sequence:)`) and the payload decoder
// (`BinaryDecoder`); what it checks of an input is `FuzzCheck.run` (Tests/Fuzz/FuzzChecks), which
// the test suite replays too. libFuzzer supplies `main`, so the fuzz entry point exists only when
// `.ci/fuzz` builds the target (`swift build --sanitize=fuzzer -Xswiftc -DEVENTLOG_FUZZ`; with the
// fuzzer sanitizer SwiftPM compiles executables with `-parse-as-library`). A normal build compiles
// the `@main` stub at the bottom instead, which is why there is no `main.swift`.
#if EVENTLOG_FUZZ
  import FuzzChecks

  /// Feeds one input to the decoders (``FuzzCheck/run(_:)``) and stops on a broken property, so
  /// that libFuzzer saves the input.
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    if case .broken(let reason) = FuzzCheck.run([UInt8](UnsafeBufferPointer(start: data, count: size))) {
      fatalError(reason)
    }
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
