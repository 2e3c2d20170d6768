import CLMDB
import CLibPQ
import CSQLite
import Foundation

/// Where and how the numbers were measured.
struct BenchmarkEnvironment: Codable, Sendable {
  var swiftVersion: String
  var cpuModel: String
  var cores: Int
  var memoryBytes: UInt64
  var os: String
  var kernel: String
  var buildConfiguration: String
  var date: String
  var command: String
  var mode: String
  /// Events per durable commit of `append.batched`.
  var batchSize: Int
  /// The one size every workload ran at (`--size`), or `nil` for the mode's sizes.
  var sizeOverride: Int?
  /// The version of the fixtures' event and booking IDs (7: time-ordered, as the library makes
  /// them; 4: random, `--ids 4`).
  var idVersion: Int
  var workDirectory: String
  var sqliteVersion: String
  var lmdbVersion: String
  /// libpq's version (`PQlibVersion`: 150018 for 15.18).
  var libpqVersion: Int
  /// The benchmark's PostgreSQL server (`postgres --version`), when a replicate workload ran.
  var postgresVersion: String?
  var loadAverageAtStart: String
  var loadAverageAtEnd: String

  static func current(
    mode: String, batchSize: Int, sizeOverride: Int?, idVersion: Int, workDirectory: String
  ) -> BenchmarkEnvironment {
    #if DEBUG
      let configuration = "debug"
    #else
      let configuration = "release"
    #endif
    return BenchmarkEnvironment(
      swiftVersion: swiftVersion(), cpuModel: cpuModel(), cores: ProcessInfo.processInfo.activeProcessorCount,
      memoryBytes: ProcessInfo.processInfo.physicalMemory, os: osName(), kernel: kernelRelease(),
      buildConfiguration: configuration, date: ISO8601DateFormatter().string(from: Date()),
      command: (["eventlog-benchmarks"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
      mode: mode, batchSize: batchSize, sizeOverride: sizeOverride, idVersion: idVersion,
      workDirectory: workDirectory, sqliteVersion: String(cString: sqlite3_libversion()),
      lmdbVersion: String(cString: mdb_version(nil, nil, nil)), libpqVersion: Int(PQlibVersion()),
      postgresVersion: nil, loadAverageAtStart: loadAverage(),
      loadAverageAtEnd: "")
  }

  static func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }

  private static func cpuModel() -> String {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
      if let colon = line.firstIndex(of: ":") {
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      }
    }
    return "unknown"
  }

  private static func osName() -> String {
    guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return "Linux" }
    for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
      return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
    return "Linux"
  }

  private static func kernelRelease() -> String {
    (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
      .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
  }

  /// The first line of `swift --version`, or the compiler this binary was built with.
  private static func swiftVersion() -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["swift", "--version"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    if (try? process.run()) != nil {
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      if process.terminationStatus == 0,
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first(where: {
          $0.contains("Swift version")
        })
      {
        return String(line)
      }
    }
    #if compiler(>=6.3)
      return "Swift 6.3 or later (compiler of this build)"
    #else
      return "Swift 6 (compiler of this build)"
    #endif
  }
}
