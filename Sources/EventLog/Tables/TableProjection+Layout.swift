/// A projection whose rows are stored by the binary coder (a `Codable` ``TableRow``): its row
/// layout, learned from the row type, is recorded and checked at open like an event type's.
package protocol CodedRowProjection {
  /// The row type, what it is called in errors, and its layout (``PayloadLayout/init(probing:)``);
  /// `nil` when the rows are not `Codable` or the type cannot be probed.
  var codedRows: (type: Any.Type, name: String, layout: PayloadLayout)? { get }
}

extension TableProjection: CodedRowProjection {
  package var codedRows: (type: Any.Type, name: String, layout: PayloadLayout)? {
    guard let codable = Row.self as? any Codable.Type else { return nil }
    func probe<T: Decodable>(_ type: T.Type) -> PayloadLayout? { try? PayloadLayout(probing: type) }
    return probe(codable).map { (Row.self, Row.rowName, $0) }
  }
}
