extension AppSchema {
  /// A set of streams named by rule rather than listed: every stream whose name starts with one of
  /// ``prefixes``.
  ///
  /// It is data, not a predicate, so that it can be shown, compared and sent elsewhere: an
  /// ``AppSchema`` says with one which streams replicate, and the replication server is told the
  /// same prefixes (`eventlog remote init`) and refuses events on other streams.
  ///
  /// ```swift
  /// let shared = StreamSelection(prefixes: ["booking-"])
  /// shared.contains("booking-6F9619FF-8B86-D011-B42D-00C04FC964FF")  // true
  /// shared.contains("restaurant-catalog")                            // false
  /// ```
  public struct StreamSelection: Sendable, Hashable, CustomStringConvertible {
    /// The name prefixes, sorted, without repeats. The empty prefix selects every stream.
    public let prefixes: [String]

    /// The streams whose names start with one of `prefixes`.
    public init(prefixes: [String] = []) {
      self.prefixes = Array(Set(prefixes)).sorted()
    }

    /// No stream.
    public static let none = StreamSelection()

    /// Every stream.
    public static let all = StreamSelection(prefixes: [""])

    /// Whether the selection holds no stream.
    public var isEmpty: Bool { prefixes.isEmpty }

    /// Whether `stream` is selected: its name starts with one of ``prefixes``.
    /// - Complexity: O(number of prefixes × prefix length).
    public func contains(_ stream: StreamID) -> Bool {
      let name = stream.rawValue
      for prefix in prefixes where name.hasPrefix(prefix) { return true }
      return false
    }

    /// The streams of this selection and of `other`.
    public func union(_ other: StreamSelection) -> StreamSelection {
      StreamSelection(prefixes: prefixes + other.prefixes)
    }

    /// The rules as text: `booking-*, user-*`; `(none)` when empty.
    public var description: String {
      isEmpty ? "(none)" : prefixes.map { $0 + "*" }.joined(separator: ", ")
    }
  }
}
