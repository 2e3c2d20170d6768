import Foundation

/// How a program run by ``runChild(_:_:environment:in:input:)`` ended, and what it wrote.
public struct ChildRun: Sendable, CustomStringConvertible {
  /// The exit status, or the signal number when ``signal`` is set.
  public var status: Int32
  /// Set when the child died of a signal (a crash).
  public var signal: Int32?
  /// Standard output, decoded as UTF-8.
  public var stdout: String
  /// Standard error, decoded as UTF-8.
  public var stderr: String
  /// Standard output as written.
  public var stdoutBytes: [UInt8]

  /// Whether the child died of a signal.
  public var crashed: Bool { signal != nil }

  /// How it ended (`exit 0`, `killed by signal 6`), then the first 2,000 characters of each output.
  public var description: String {
    (signal.map { "killed by signal \($0)" } ?? "exit \(status)")
      + "\nstdout: \(stdout.prefix(2_000))\nstderr: \(stderr.prefix(2_000))"
  }
}

/// Runs a program to completion, as a user would, with standard output and error captured in
/// files (no pipe to fill up) and standard input from `input`, or `/dev/null`.
///
/// The child inherits the environment without `EVENTLOG_DB` and `SUPABASE_ANON_KEY`, with
/// `SWIFT_BACKTRACE=enable=no` (a crash ends it at once, without a backtracer), then `environment`.
/// - Parameters:
///   - executable: the program's path.
///   - arguments: its arguments, without the program's name.
///   - environment: variables to set over the inherited ones.
///   - directory: the working directory; a temporary one when `nil`.
///   - input: standard input's bytes; `/dev/null` when `nil`.
/// - Returns: how the child ended, and what it wrote.
/// - Throws: when the program cannot be started, or its output files cannot be made or read.
public func runChild(
  _ executable: String, _ arguments: [String], environment: [String: String] = [:],
  in directory: String? = nil, input: Data? = nil
) throws -> ChildRun {
  let scratch = TemporaryDirectory("child")
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  var env = ProcessInfo.processInfo.environment
  env["EVENTLOG_DB"] = nil
  env["SUPABASE_ANON_KEY"] = nil
  env["SWIFT_BACKTRACE"] = "enable=no"
  for (key, value) in environment { env[key] = value }
  process.environment = env
  process.currentDirectoryURL = URL(fileURLWithPath: directory ?? scratch.path)
  let outURL = scratch.url.appendingPathComponent("stdout")
  let errURL = scratch.url.appendingPathComponent("stderr")
  _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
  _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
  let out = try FileHandle(forWritingTo: outURL)
  let err = try FileHandle(forWritingTo: errURL)
  process.standardOutput = out
  process.standardError = err
  if let input {
    let inURL = scratch.url.appendingPathComponent("stdin")
    try input.write(to: inURL)
    process.standardInput = try FileHandle(forReadingFrom: inURL)
  } else {
    process.standardInput = FileHandle.nullDevice
  }
  try process.run()
  process.waitUntilExit()
  try out.close()
  try err.close()
  let stdout = [UInt8](try Data(contentsOf: outURL))
  let stderr = [UInt8](try Data(contentsOf: errURL))
  let signaled = process.terminationReason == .uncaughtSignal
  return ChildRun(
    status: process.terminationStatus, signal: signaled ? process.terminationStatus : nil,
    stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
    stdoutBytes: stdout)
}
