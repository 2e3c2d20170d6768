import EventLog
import Foundation

/// Starts this same executable as a child with a ``ChildRequest`` and reads its ``ChildReport``.
enum ChildProcess {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// The path of the running executable (`/proc/self/exe` resolved, else `argv[0]`).
  static let executable: String = {
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
    return CommandLine.arguments[0]
  }()

  /// Runs the child to completion; its standard error goes to ours.
  static func run(_ request: ChildRequest, allowDebug: Bool) throws -> ChildReport {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    let json = String(decoding: try PayloadJSONEncoder().encode(request), as: UTF8.self)
    process.arguments = [ChildFlag.name, json] + (allowDebug ? ["--allow-debug"] : [])
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw Failure(
        description:
          "child for \(request.workload.rawValue)/\(request.system.rawValue)/\(request.size) (\(request.mode.rawValue)) "
          + "ended with status \(process.terminationStatus)")
    }
    do {
      return try PayloadJSONDecoder().decode(ChildReport.self, from: data)
    } catch {
      throw Failure(
        description: "child output is not a report: \(String(decoding: data.prefix(300), as: UTF8.self))")
    }
  }
}
