/// A restaurant's kind of food.
///
/// The known cases match the remote catalog's spelling exactly (`"Italian"`, `"Japanese"`, …);
/// any other value, including another spelling of a known one, is kept verbatim as
/// ``other(_:)``, so ``rawValue`` always gives back the string the remote sent and a refresh
/// never reports a change that did not happen.
public enum Cuisine: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
  case american
  case chinese
  case french
  case greek
  case indian
  case italian
  case japanese
  case korean
  case mexican
  case spanish
  case thai
  case vietnamese
  /// A value this build does not know, kept as sent.
  case other(String)

  /// The known cases with their stored spellings.
  public static let known: [Cuisine] = [
    .american, .chinese, .french, .greek, .indian, .italian, .japanese, .korean, .mexican, .spanish,
    .thai, .vietnamese,
  ]

  private static let byRawValue: [String: Cuisine] = Dictionary(
    uniqueKeysWithValues: known.map { ($0.rawValue, $0) })

  /// The cuisine spelled `rawValue`; an unknown spelling becomes ``other(_:)``.
  public init(rawValue: String) {
    self = Self.byRawValue[rawValue] ?? .other(rawValue)
  }

  /// The stored spelling.
  public var rawValue: String {
    switch self {
    case .american: "American"
    case .chinese: "Chinese"
    case .french: "French"
    case .greek: "Greek"
    case .indian: "Indian"
    case .italian: "Italian"
    case .japanese: "Japanese"
    case .korean: "Korean"
    case .mexican: "Mexican"
    case .spanish: "Spanish"
    case .thai: "Thai"
    case .vietnamese: "Vietnamese"
    case .other(let value): value
    }
  }

  /// The cuisine's name, ``rawValue``.
  public var description: String { rawValue }
}
