import Foundation

/// Validation of JSON text against RFC 8259, strictly: what Foundation's parsers let through
/// (a trailing comma, `01`, `1e`, `-`, `"\x"`, duplicate keys, a number no `Double` holds) is
/// refused, and the error says what is wrong and where.
///
/// It is the first half of the package's one JSON reader: `JSONNode.parse` validates here, then
/// builds the tree from text it knows is valid.
///
/// Beyond the grammar it refuses, as I-JSON (RFC 7493) does: invalid UTF-8, a lone surrogate
/// (`"\uD800"`), a duplicate key in an object (compared after unescaping), a number beyond the
/// range of a `Double` (`1e400`), a byte order mark, and nesting deeper than
/// ``maximumDepth``. It never recurses, so hostile nesting cannot overflow the stack.
package enum StrictJSON {
  /// The deepest nesting of arrays and objects accepted.
  public static let maximumDepth = 512

  /// What is wrong with the text, and where.
  public struct SyntaxError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The offset of the offending byte from the start of the text, from 0.
    public var offset: Int
    /// The line of that byte, from 1.
    public var line: Int
    /// Its column in bytes, from 1.
    public var column: Int
    /// What is wrong, for example `a trailing comma before '}'`.
    public var reason: String

    /// The description: `LocalizedError`'s text is the same sentence.
    public var errorDescription: String? { description }

    /// The position and the reason: `line 1, column 9 (byte offset 8): a trailing comma before '}'`.
    public var description: String { "line \(line), column \(column) (byte offset \(offset)): \(reason)" }
  }

  /// Throws unless `data` is one JSON text as RFC 8259 defines it (and the rules above).
  /// - Throws: ``SyntaxError`` naming the first problem.
  /// - Complexity: O(n) in the length of the text.
  public static func validate(_ data: Data) throws(SyntaxError) {
    let result = data.withUnsafeBytes { raw in
      Result { () throws(SyntaxError) in try validate(raw.bindMemory(to: UInt8.self)) }
    }
    try result.get()
  }

  /// Throws unless `text` is one JSON text.
  /// - Throws: ``SyntaxError`` naming the first problem.
  public static func validate(_ text: Substring) throws(SyntaxError) {
    let result = text.utf8.withContiguousStorageIfAvailable { bytes in
      Result { () throws(SyntaxError) in try validate(bytes) }
    }
    if let result { return try result.get() }
    try Array(text.utf8).withUnsafeBufferPointer { bytes throws(SyntaxError) in try validate(bytes) }
  }

  /// Throws unless `bytes` are one JSON text.
  /// - Throws: ``SyntaxError`` naming the first problem.
  public static func validate(_ bytes: UnsafeBufferPointer<UInt8>) throws(SyntaxError) {
    var validator = Validator(bytes: bytes)
    try validator.run()
  }
}

/// One pass over the bytes with an explicit stack of open containers.
private struct Validator {
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0

  /// An open array or object; an object's keys so far are `keys[firstKey...]` or, past a few,
  /// in `large`.
  struct Frame {
    var isObject: Bool
    var firstKey: Int
    var large: Set<[UInt8]>?
  }

  /// A key as written (`start..<end`, between the quotes) or, when it has escapes, unescaped.
  struct Key {
    var start: Int
    var end: Int
    var unescaped: [UInt8]?
  }

  var frames: [Frame] = []
  var keys: [Key] = []

  /// How many keys an object compares pairwise before it keeps them in a set.
  static let smallObject = 16

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  enum State {
    case value, key, afterValue
  }

  mutating func run() throws(StrictJSON.SyntaxError) {
    if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
      throw failure(at: 0, "a byte order mark (JSON text must not begin with one)")
    }
    skipWhitespace()
    if index == bytes.count { throw failure(at: index, "no JSON value (the text is empty)") }
    var state = State.value
    while true {
      switch state {
      case .value:
        state = try value()
      case .key:
        skipWhitespace()
        guard index < bytes.count else { throw endOfText("a key") }
        guard bytes[index] == UInt8(ascii: "\"") else {
          throw failure(at: index, "\(Self.describe(bytes[index])) where a key in double quotes was expected")
        }
        let keyStart = index
        let key = try string(keepingKey: true)
        try add(key, at: keyStart)
        skipWhitespace()
        guard index < bytes.count else { throw endOfText("':'") }
        guard bytes[index] == UInt8(ascii: ":") else {
          throw failure(at: index, "\(Self.describe(bytes[index])) where ':' was expected after a key")
        }
        index += 1
        state = .value
      case .afterValue:
        skipWhitespace()
        guard let frame = frames.last else {
          guard index == bytes.count else {
            throw failure(at: index, "\(Self.describe(bytes[index])) after the end of the JSON value")
          }
          return
        }
        let close = frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        guard index < bytes.count else { throw endOfText("',' or '\(Character(Unicode.Scalar(close)))'") }
        let byte = bytes[index]
        if byte == UInt8(ascii: ",") {
          let comma = index
          index += 1
          skipWhitespace()
          if index < bytes.count, bytes[index] == close {
            throw failure(at: comma, "a trailing comma before '\(Character(Unicode.Scalar(close)))'")
          }
          state = frame.isObject ? .key : .value
        } else if byte == close {
          index += 1
          pop()
          state = .afterValue
        } else {
          throw failure(
            at: index,
            "\(Self.describe(byte)) where ',' or '\(Character(Unicode.Scalar(close)))' was expected")
        }
      }
    }
  }

  /// Reads a value or opens a container; returns what comes next.
  mutating func value() throws(StrictJSON.SyntaxError) -> State {
    skipWhitespace()
    guard index < bytes.count else { throw endOfText("a value") }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      try push(isObject: true)
      index += 1
      skipWhitespace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        pop()
        return .afterValue
      }
      return .key
    case UInt8(ascii: "["):
      try push(isObject: false)
      index += 1
      skipWhitespace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        pop()
        return .afterValue
      }
      return .value
    case UInt8(ascii: "\""):
      _ = try string(keepingKey: false)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      try number()
    case UInt8(ascii: "t"):
      try literal("true")
    case UInt8(ascii: "f"):
      try literal("false")
    case UInt8(ascii: "n"):
      try literal("null")
    default:
      throw failure(at: index, "\(Self.describe(bytes[index])) where a value was expected")
    }
    return .afterValue
  }

  mutating func push(isObject: Bool) throws(StrictJSON.SyntaxError) {
    guard frames.count < StrictJSON.maximumDepth else {
      throw failure(at: index, "nesting deeper than \(StrictJSON.maximumDepth) levels")
    }
    frames.append(Frame(isObject: isObject, firstKey: keys.count, large: nil))
  }

  mutating func pop() {
    let frame = frames.removeLast()
    if frame.isObject { keys.removeSubrange(frame.firstKey...) }
  }

  /// Records a key of the innermost object; a key it already has is an error.
  mutating func add(_ key: Key, at position: Int) throws(StrictJSON.SyntaxError) {
    let last = frames.count - 1
    let frame = frames[last]
    if frame.large != nil {
      let name = bytes(of: key)
      if frames[last].large?.insert(name).inserted == false {
        throw duplicate(key, at: position)
      }
      return
    }
    for other in keys[frame.firstKey...] where same(other, key) {
      throw duplicate(key, at: position)
    }
    keys.append(key)
    if keys.count - frame.firstKey > Self.smallObject {
      let names = Set(keys[frame.firstKey...].map { bytes(of: $0) })
      frames[last].large = names
      keys.removeSubrange(frame.firstKey...)
    }
  }

  func bytes(of key: Key) -> [UInt8] {
    key.unescaped ?? Array(bytes[key.start..<key.end])
  }

  /// Whether two keys are the same once unescaped; without allocating when neither has escapes
  /// (every key in practice).
  func same(_ a: Key, _ b: Key) -> Bool {
    switch (a.unescaped, b.unescaped) {
    case (nil, nil):
      return a.end - a.start == b.end - b.start
        && bytes[a.start..<a.end].elementsEqual(bytes[b.start..<b.end])
    case (let x?, let y?):
      return x == y
    case (let x?, nil):
      return x.elementsEqual(bytes[b.start..<b.end])
    case (nil, let y?):
      return y.elementsEqual(bytes[a.start..<a.end])
    }
  }

  func duplicate(_ key: Key, at position: Int) -> StrictJSON.SyntaxError {
    let name = String(decoding: bytes(of: key), as: UTF8.self)
    let shown = name.count > 60 ? String(name.prefix(60)) + "…" : name
    return failure(at: position, "the key \"\(shown)\" appears twice in one object")
  }

  /// Reads a string at its opening quote; for a key, returns where it is and, when it has
  /// escapes, its unescaped bytes.
  mutating func string(keepingKey: Bool) throws(StrictJSON.SyntaxError) -> Key {
    let quote = index
    index += 1
    let start = index
    var unescaped: [UInt8]?
    while true {
      // The common case first: a run of printable ASCII other than the quote and the backslash,
      // eight bytes at a time, then byte by byte.
      let run = index
      index = Self.plainRun(in: bytes, from: index)
      while index < bytes.count {
        let byte = bytes[index]
        guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { break }
        index += 1
      }
      if unescaped != nil, index > run { unescaped?.append(contentsOf: bytes[run..<index]) }
      guard index < bytes.count else { throw failure(at: quote, "a string that is not closed") }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        let key = Key(start: start, end: index, unescaped: unescaped)
        index += 1
        return key
      case UInt8(ascii: "\\"):
        if keepingKey && unescaped == nil { unescaped = Array(bytes[start..<index]) }
        try escape(into: &unescaped)
      case 0x00:
        throw failure(at: index, "a NUL byte in a string (write it as \\u0000)")
      case 0x01..<0x20:
        throw failure(
          at: index, "an unescaped control character U+00\(Self.hex(byte)) in a string (write it escaped)")
      case 0x20..<0x80:
        unescaped?.append(byte)
        index += 1
      default:
        let length = try utf8Sequence()
        unescaped?.append(contentsOf: bytes[index..<index + length])
        index += length
      }
    }
  }

  /// The end of the run of eight-byte words from `start` that hold only printable ASCII other
  /// than `"` and `\` (SWAR: a byte below 0x20, equal to 0x22 or 0x5C, or from 0x80 is found in
  /// a word at once).
  @inline(__always)
  static func plainRun(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    var index = start
    let raw = UnsafeRawBufferPointer(bytes)
    while raw.count &- index >= 8 {
      let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      let quote = word ^ (ones &* 0x22)
      let backslash = word ^ (ones &* 0x5C)
      let special =
        (word &- ones &* 0x20) | (quote &- ones) & ~quote | (backslash &- ones) & ~backslash
      // Any high bit: a byte from 0x80 (the word itself), below 0x20, a quote or a backslash.
      guard (word | special) & highs == 0 else { break }
      index &+= 8
    }
    return index
  }

  /// Reads an escape at its backslash.
  mutating func escape(into unescaped: inout [UInt8]?) throws(StrictJSON.SyntaxError) {
    let backslash = index
    index += 1
    guard index < bytes.count else { throw failure(at: backslash, "a string that is not closed") }
    let simple: UInt8?
    switch bytes[index] {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = bytes[index]
    case UInt8(ascii: "b"): simple = 0x08
    case UInt8(ascii: "f"): simple = 0x0C
    case UInt8(ascii: "n"): simple = 0x0A
    case UInt8(ascii: "r"): simple = 0x0D
    case UInt8(ascii: "t"): simple = 0x09
    case UInt8(ascii: "u"): simple = nil
    default:
      throw failure(at: backslash, "an invalid escape \\\(Self.describeEscaped(bytes[index])) in a string")
    }
    if let simple {
      unescaped?.append(simple)
      index += 1
      return
    }
    var scalar = try hex4(at: backslash)
    index += 5  // past "uXXXX"
    if (0xDC00...0xDFFF).contains(scalar) {
      throw failure(
        at: backslash, "a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
    }
    if (0xD800...0xDBFF).contains(scalar) {
      guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
      else {
        throw failure(
          at: backslash, "a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
      }
      let low = try hex4(at: index)
      guard (0xDC00...0xDFFF).contains(low) else {
        throw failure(
          at: backslash, "a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
      }
      scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      index += 6
    }
    if unescaped != nil, let value = Unicode.Scalar(scalar) {
      unescaped?.append(contentsOf: Array(String(Character(value)).utf8))
    }
  }

  /// The four hexadecimal digits after `\u` at `backslash`.
  func hex4(at backslash: Int) throws(StrictJSON.SyntaxError) -> UInt32 {
    var value: UInt32 = 0
    for offset in 2..<6 {
      guard backslash + offset < bytes.count, let digit = Self.hexValue(bytes[backslash + offset]) else {
        throw failure(at: backslash, "an invalid \\u escape (four hexadecimal digits must follow)")
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }

  /// The length of the well-formed UTF-8 sequence at `index` (Unicode table 3-7).
  func utf8Sequence() throws(StrictJSON.SyntaxError) -> Int {
    guard let length = UTF8Validation.sequenceLength(UnsafeRawBufferPointer(bytes), at: index) else {
      throw failure(at: index, "invalid UTF-8 (byte 0x\(Self.hex(bytes[index])) begins no valid sequence)")
    }
    return length
  }

  /// Reads a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, within a `Double`'s range.
  mutating func number() throws(StrictJSON.SyntaxError) {
    let start = index
    func isDigit(_ position: Int) -> Bool {
      position < bytes.count && bytes[position] >= UInt8(ascii: "0") && bytes[position] <= UInt8(ascii: "9")
    }
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard isDigit(index) else { throw failure(at: start, "a '-' without digits") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
      if isDigit(index) { throw failure(at: start, "a number with a leading zero") }
    } else {
      while isDigit(index) { index += 1 }
    }
    var exponent = false
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard isDigit(index) else {
        throw failure(at: start, "a number without digits after its decimal point")
      }
      while isDigit(index) { index += 1 }
    }
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      exponent = true
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
        index += 1
      }
      guard isDigit(index) else { throw failure(at: start, "a number without digits in its exponent") }
      while isDigit(index) { index += 1 }
    }
    if index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
        throw failure(at: start, "an invalid number \(Self.quoted(bytes[start...index]))")
      default:
        break
      }
    }
    // Fifteen digits always fit; longer numbers and exponents are checked against a Double.
    if exponent || index - start > 15 {
      let text = String(decoding: bytes[start..<index], as: UTF8.self)
      if let value = Double(text), !value.isFinite {
        throw failure(
          at: start, "the number \(Self.quoted(bytes[start..<index])) is out of range (beyond a Double)")
      }
    }
  }

  mutating func literal(_ word: StaticString) throws(StrictJSON.SyntaxError) {
    let start = index
    let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected)
    else {
      var end = index
      while end < bytes.count && end - index < 12,
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[end]) || bytes[end] >= 0x80
      {
        end += 1
      }
      throw failure(
        at: start,
        "an invalid literal \(Self.quoted(bytes[start..<max(end, start + 1)])) (true, false or null?)")
    }
    index += expected.count
  }

  mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  func endOfText(_ expected: String) -> StrictJSON.SyntaxError {
    failure(at: bytes.count, "the text ends where \(expected) was expected")
  }

  /// The error at byte `offset`, with its line and column.
  func failure(at offset: Int, _ reason: String) -> StrictJSON.SyntaxError {
    var line = 1
    var lineStart = 0
    for position in 0..<min(offset, bytes.count) where bytes[position] == 0x0A {
      line += 1
      lineStart = position + 1
    }
    return StrictJSON.SyntaxError(offset: offset, line: line, column: offset - lineStart + 1, reason: reason)
  }

  static func describe(_ byte: UInt8) -> String {
    switch byte {
    case 0x00: "a NUL byte"
    case 0x21...0x7E: "'\(Character(Unicode.Scalar(byte)))'"
    default: "byte 0x\(hex(byte))"
    }
  }

  static func describeEscaped(_ byte: UInt8) -> String {
    (0x21...0x7E).contains(byte) ? String(Character(Unicode.Scalar(byte))) : "(byte 0x\(hex(byte)))"
  }

  /// At most 40 bytes of the text, quoted.
  static func quoted(_ slice: Slice<UnsafeBufferPointer<UInt8>>) -> String {
    let text = String(decoding: slice.prefix(40), as: UTF8.self)
    return "'" + text + (slice.count > 40 ? "…" : "") + "'"
  }

  static func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
