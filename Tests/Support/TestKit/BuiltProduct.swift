import Foundation

/// The path of the executable `name` built with the tests (next to the test bundle, in
/// `<scratch>/debug/`), or the path in the environment variable `override` when it is set.
public func builtProduct(_ name: String, override: String) -> String {
  if let path = ProcessInfo.processInfo.environment[override], !path.isEmpty { return path }
  let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
  // Under XCTest the first argument can be the runner; walk up to the build directory.
  let candidates = [
    bundle.appendingPathComponent(name).path,
    bundle.deletingLastPathComponent().appendingPathComponent(name).path,
    bundle.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(name).path,
  ]
  return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
}
