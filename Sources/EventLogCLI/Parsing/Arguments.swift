import Synchronization

/// What the parser, the help text and the usage line know of one declared flag, option or
/// positional argument.
struct ArgumentDefinition: Sendable {
  enum Kind: Sendable, Equatable {
    /// `--name`.
    case flag
    /// `--name VALUE`.
    case option(placeholder: String)
    /// `VALUE`, by position.
    case positional
  }

  var kind: Kind
  /// The long name without dashes (`from`), or a positional's placeholder (`SEQ`).
  var name: String
  /// One line of help.
  var help: String
  /// Whether the command line must give it.
  var isRequired: Bool

  /// How it is named in messages: `--from`, `SEQ`.
  var label: String { kind == .positional ? name : "--\(name)" }

  /// How it is shown in the usage line and the help: `--from <SEQ>` (help), `--from SEQ` (usage).
  func synopsis(angled: Bool) -> String {
    switch kind {
    case .flag: "--\(name)"
    case .option(let placeholder): angled ? "--\(name) <\(placeholder)>" : "--\(name) \(placeholder)"
    case .positional: name
    }
  }
}

/// The storage behind one declared argument: its definition and, once parsed, its value.
///
/// A command's declarations are made afresh for every command line (``CLICommand`` `init()`), so a
/// slot is written by one parse and read by the command it belongs to.
protocol ArgumentSlot: AnyObject, Sendable {
  var definition: ArgumentDefinition { get }
  /// Whether the command line gave it.
  var wasGiven: Bool { get }
  /// Takes a value from the command line.
  func accept(_ text: String) throws(ArgumentValueError)
  /// Takes a flag from the command line.
  func acceptFlag()
  /// Whether it holds a value (given, or declared with a default).
  var hasValue: Bool { get }
}

/// The slot of a value of type `Value`.
final class ValueSlot<Value: Sendable>: ArgumentSlot {
  let definition: ArgumentDefinition
  private let type: ArgumentType<Value>?
  private let state: Mutex<(value: Value?, given: Bool)>

  init(_ definition: ArgumentDefinition, type: ArgumentType<Value>?, initial: Value?) {
    self.definition = definition
    self.type = type
    state = Mutex((initial, false))
  }

  var wasGiven: Bool { state.withLock { $0.given } }
  var hasValue: Bool { state.withLock { $0.value != nil } }

  /// The value; reading a required one before the command line was parsed is a programmer error.
  var value: Value {
    guard let value = state.withLock({ $0.value }) else {
      preconditionFailure("'\(definition.label)' was read before the command line was parsed")
    }
    return value
  }

  func accept(_ text: String) throws(ArgumentValueError) {
    guard let type else { preconditionFailure("'\(definition.label)' takes no value") }
    switch type.convert(text) {
    case .success(let value): state.withLock { $0 = (value, true) }
    case .failure(let error): throw error
    }
  }

  func acceptFlag() {
    guard let flag = true as? Value else { preconditionFailure("'\(definition.label)' is not a flag") }
    state.withLock { $0 = (flag, true) }
  }
}

/// A declaration a command holds: the parser finds it by reflection.
protocol DeclaredArgument {
  var slot: any ArgumentSlot { get }
}

/// A set of declarations that several commands share (the replication commands' server and
/// retry options), held as a stored property of each.
public protocol ArgumentGroup: Sendable {}

/// `--name`: a flag, `false` unless given.
@propertyWrapper
public struct Flag: DeclaredArgument, Sendable {
  private let storage: ValueSlot<Bool>
  var slot: any ArgumentSlot { storage }

  /// Declares `--name` with a line of help.
  public init(_ name: String, help: String) {
    storage = ValueSlot(
      ArgumentDefinition(kind: .flag, name: name, help: help, isRequired: false), type: nil, initial: false)
  }

  /// Whether the command line gave the flag.
  public var wrappedValue: Bool { storage.value }
}

/// `--name VALUE`: an option of type `Value`, required unless it has a default or is optional.
@propertyWrapper
public struct Option<Value: Sendable>: DeclaredArgument, Sendable {
  private let storage: ValueSlot<Value>
  var slot: any ArgumentSlot { storage }

  /// A required option.
  public init(_ name: String, _ placeholder: String, help: String, type: ArgumentType<Value>) {
    storage = ValueSlot(
      ArgumentDefinition(kind: .option(placeholder: placeholder), name: name, help: help, isRequired: true),
      type: type, initial: nil)
  }

  /// An option with a default.
  public init(
    wrappedValue: Value, _ name: String, _ placeholder: String, help: String, type: ArgumentType<Value>
  ) {
    storage = ValueSlot(
      ArgumentDefinition(kind: .option(placeholder: placeholder), name: name, help: help, isRequired: false),
      type: type, initial: wrappedValue)
  }

  /// An option that may be left out (`nil`).
  public init<Wrapped: Sendable>(
    _ name: String, _ placeholder: String, help: String, type: ArgumentType<Wrapped>
  ) where Value == Wrapped? {
    storage = ValueSlot(
      ArgumentDefinition(kind: .option(placeholder: placeholder), name: name, help: help, isRequired: false),
      type: type.optional, initial: .some(nil))
  }

  /// The value given, else the default.
  public var wrappedValue: Value { storage.value }
  /// The declaration itself: `$option.wasGiven`.
  public var projectedValue: Option<Value> { self }
  /// Whether the command line gave the option (rather than its default).
  public var wasGiven: Bool { storage.wasGiven }
}

extension Option where Value == String {
  /// A required option of any text.
  public init(_ name: String, _ placeholder: String, help: String) {
    self.init(name, placeholder, help: help, type: .text)
  }
}

extension Option where Value == String? {
  /// An optional option of any text.
  public init(_ name: String, _ placeholder: String, help: String) {
    self.init(name, placeholder, help: help, type: ArgumentType<String>.text)
  }
}

/// `VALUE`: a positional argument of type `Value`, in declaration order; required unless optional.
@propertyWrapper
public struct Argument<Value: Sendable>: DeclaredArgument, Sendable {
  private let storage: ValueSlot<Value>
  var slot: any ArgumentSlot { storage }

  /// A required argument shown as `placeholder`.
  public init(_ placeholder: String, help: String, type: ArgumentType<Value>) {
    storage = ValueSlot(
      ArgumentDefinition(kind: .positional, name: placeholder, help: help, isRequired: true), type: type,
      initial: nil)
  }

  /// An argument that may be left out (`nil`).
  public init<Wrapped: Sendable>(_ placeholder: String, help: String, type: ArgumentType<Wrapped>)
  where Value == Wrapped? {
    storage = ValueSlot(
      ArgumentDefinition(kind: .positional, name: placeholder, help: help, isRequired: false),
      type: type.optional, initial: .some(nil))
  }

  /// The value given.
  public var wrappedValue: Value { storage.value }
}

extension Argument where Value == String {
  /// A required argument of any text.
  public init(_ placeholder: String, help: String) { self.init(placeholder, help: help, type: .text) }
}
