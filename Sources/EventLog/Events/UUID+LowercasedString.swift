import Foundation

extension UUID {
  /// The UUID as text in lower case (`2bdcaad7-44ad-5115-ae8a-a9acb7dac2fd`), as every output of
  /// the event log writes it: RFC 9562 asks for lower case on output and either case on input,
  /// which `UUID(uuidString:)` accepts. (`uuidString` is upper case.)
  public var lowercasedString: String { uuidString.lowercased() }
}
