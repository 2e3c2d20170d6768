/// A set of streams named by rule rather than listed: every stream whose name starts with one of
/// ``prefixes``, and the streams named exactly in ``names``.
///
/// It is data, not a predicate, so that it can be shown, compared and sent elsewhere: an
/// ``AppSchema`` says with one which streams replicate, and a replication server told the same
/// selection can refuse events on other streams.
///
/// ```swift
/// let shared = StreamSelection(prefixes: ["booking-"])
/// shared.contains("booking-6F9619FF-8B86-D011-B42D-00C04FC964FF")  // true
/// shared.contains("restaurant-catalog")                            // false
/// ```
public struct StreamSelection: Sendable, Hashable, CustomStringConvertible {
  /// The name prefixes, sorted, without repeats. The empty prefix selects every stream.
  public let prefixes: [String]
  /// The names selected exactly, sorted, without repeats.
  public let names: [String]
  /// ``names`` as a set, for ``contains(_:)``.
  private let nameSet: Set<String>

  /// The streams whose names start with one of `prefixes`, and those named in `names`.
  public init(prefixes: [String] = [], names: [String] = []) {
    self.prefixes = Array(Set(prefixes)).sorted()
    self.nameSet = Set(names)
    self.names = nameSet.sorted()
  }

  /// No stream.
  public static let none = StreamSelection()

  /// Every stream.
  public static let all = StreamSelection(prefixes: [""])

  /// Whether the selection holds no stream.
  public var isEmpty: Bool { prefixes.isEmpty && names.isEmpty }

  /// Whether `stream` is selected: its name starts with one of ``prefixes`` or is one of ``names``.
  /// - Complexity: O(number of prefixes × prefix length).
  public func contains(_ stream: StreamID) -> Bool {
    let name = stream.rawValue
    for prefix in prefixes where name.hasPrefix(prefix) { return true }
    return !nameSet.isEmpty && nameSet.contains(name)
  }

  /// The streams of this selection and of `other`.
  public func union(_ other: StreamSelection) -> StreamSelection {
    StreamSelection(prefixes: prefixes + other.prefixes, names: names + other.names)
  }

  /// The rules as text: `booking-*, restaurant-catalog`; `(none)` when empty.
  public var description: String {
    isEmpty ? "(none)" : (prefixes.map { $0 + "*" } + names).joined(separator: ", ")
  }

  /// Whether two selections have the same prefixes and names.
  public static func == (lhs: StreamSelection, rhs: StreamSelection) -> Bool {
    lhs.prefixes == rhs.prefixes && lhs.names == rhs.names
  }

  /// Hashes the prefixes and names.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(prefixes)
    hasher.combine(names)
  }
}
