/// The coding key of an element of an unkeyed container: its index, for coding paths in errors.
struct IndexCodingKey: CodingKey {
  let intValue: Int?
  var stringValue: String { "Index \(intValue ?? 0)" }

  init(intValue: Int) {
    self.intValue = intValue
  }

  init?(stringValue: String) {
    return nil
  }
}

/// The key of a `super` encoder or decoder, for coding paths.
struct SuperCodingKey: CodingKey {
  var stringValue: String { "super" }
  var intValue: Int? { nil }

  init() {}

  init?(stringValue: String) {
    return nil
  }

  init?(intValue: Int) {
    return nil
  }
}
