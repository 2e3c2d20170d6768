import EventLog
import Foundation

/// A usage error: the message names the option or value.
struct UsageError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// `--name value` options and `--flag` flags, checked against a spec.
struct ParsedOptions {
  private var values: [String: String] = [:]
  private var flags: Set<String> = []

  /// Parses `arguments` against `spec`.
  /// - Parameters:
  ///   - arguments: the command line after the command's name.
  ///   - spec: option names (without `--`), each with whether it takes a value.
  /// - Throws: ``UsageError`` for an argument that is not an option of `spec`, a value missing,
  ///   or an option given twice.
  init(_ arguments: [String], spec: [String: Bool]) throws(UsageError) {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      guard argument.hasPrefix("--"), argument.count > 2 else {
        throw UsageError("unexpected argument '\(argument)'")
      }
      let name = String(argument.dropFirst(2))
      guard let takesValue = spec[name] else { throw UsageError("unknown option '\(argument)'") }
      if takesValue {
        guard index + 1 < arguments.count else { throw UsageError("'\(argument)' needs a value") }
        guard values[name] == nil else { throw UsageError("'\(argument)' is given twice") }
        values[name] = arguments[index + 1]
        index += 2
      } else {
        flags.insert(name)
        index += 1
      }
    }
  }

  func flag(_ name: String) -> Bool { flags.contains(name) }

  func string(_ name: String) -> String? { values[name] }

  func required(_ name: String) throws(UsageError) -> String {
    guard let value = values[name], !value.isEmpty else { throw UsageError("'--\(name)' is required") }
    return value
  }

  /// An integer option within `range`, or `default` when absent.
  func integer<T: FixedWidthInteger>(
    _ name: String, in range: ClosedRange<T>, default value: T
  ) throws(UsageError) -> T {
    guard let text = values[name] else { return value }
    guard let parsed = T(text), range.contains(parsed) else {
      throw UsageError(
        "invalid value '\(text)' for '--\(name)': expected an integer (\(range.lowerBound)…\(range.upperBound))"
      )
    }
    return parsed
  }

  /// `--durability durable|nosync`: whether commits skip the flush.
  func noSync() throws(UsageError) -> Bool {
    switch values["durability"] {
    case nil, "durable": return false
    case "nosync": return true
    case let other?:
      throw UsageError("invalid value '\(other)' for '--durability': expected durable or nosync")
    }
  }
}
