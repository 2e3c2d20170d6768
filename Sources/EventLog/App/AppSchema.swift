/// What an app's data is, in one value: its event types, its projections, its rules for events
/// that come from elsewhere, the streams it shares with the owner's other devices and how its
/// stream names are shown.
///
/// ``EventStore``, the replicator and the `eventlog` command line all take one (the replicator
/// through its store), so the pieces cannot disagree about what the app's data is. An app made of
/// several modules composes their schemas into one (``init(name:composing:)``):
///
/// ```swift
/// extension AppSchema {
///   static let users = AppSchema(
///     name: "users", eventTypes: [UserRegistered.self, UserRenamed.self, UserDeleted.self],
///     projections: [Users.projection], admission: UserRules(),
///     replicatedStreams: AppSchema.StreamSelection(prefixes: ["user-"]))
///   static let app = AppSchema(name: "my-app", composing: [.restaurantBooking, .users])
/// }
/// let store = try EventStore(path: path, schema: .app)
/// ```
///
/// Each event is judged by the rules of the module that registers its type (``admission``); an
/// event of a type that no module registers is *unreadable* (stored as it came, skipped by the
/// projections, folded in by a later build that reads it).
public struct AppSchema: Sendable {
  /// The app's name, as the command line's help shows it (`restaurant-booking`).
  public let name: String
  /// Every event type of every module: the JSON of `log --json`, `export` and `import`, and
  /// whether this build reads an event.
  public let eventTypes: EventTypeRegistry
  /// The inline projections of every module, in order.
  public let projections: [any Projection]
  /// The streams whose events are shared with the owner's other devices (replication); the rest
  /// stay on the device.
  public let replicatedStreams: AppSchema.StreamSelection
  /// How stream IDs are shown and read back.
  public let streamNames: AppSchema.StreamNames
  /// The names of the modules' schemas, in order: this schema's own name when it composes none.
  public let modules: [String]
  /// Each event type's rules: the admission of the module that registers it.
  let rules: [String: any EventAdmission]
  /// How events of a type no module registers are judged: `nil` makes them unreadable. Only a
  /// schema made for ``EventStore/init(path:projections:admission:options:)`` sets it.
  let unknownTypes: UnknownTypes?

  /// How an ad-hoc schema (projections and one admission, no event types) judges every event.
  struct UnknownTypes: Sendable {
    /// The admission; `nil` admits every event.
    var admission: (any EventAdmission)?
  }

  /// A schema of one module.
  ///
  /// - Parameters:
  ///   - name: the app's (or module's) name.
  ///   - eventTypes: the event types of the module.
  ///   - projections: its inline projections, with distinct names.
  ///   - admission: the module's rules for events that come from elsewhere (an import, a pull),
  ///     asked only about events of `eventTypes`; `nil`: an event of those types is admitted when
  ///     this build reads it (``EventTypeRegistry/readability(of:)``).
  ///   - replicatedStreams: the streams shared with the owner's other devices.
  ///   - streamNames: how its stream IDs are shown and read back.
  public init(
    name: String, eventTypes: [any EventPayload.Type], projections: [any Projection] = [],
    admission: (any EventAdmission)? = nil, replicatedStreams: AppSchema.StreamSelection = .none,
    streamNames: AppSchema.StreamNames = .verbatim
  ) {
    let registry = EventTypeRegistry(eventTypes)
    let judge = admission ?? RegistryAdmission(registry: registry)
    self.name = name
    self.eventTypes = registry
    self.projections = projections
    // An app that shares its streams shares its erasures: they must reach every copy.
    self.replicatedStreams =
      replicatedStreams.isEmpty
      ? replicatedStreams
      : replicatedStreams.union(AppSchema.StreamSelection(prefixes: [SubjectErased.streamPrefix]))
    self.streamNames = streamNames
    self.modules = [name]
    // The layer's own event types follow the layer's rules, whatever the app's admission.
    let layerJudge = RegistryAdmission(registry: EventTypeRegistry())
    self.rules = Dictionary(
      registry.typeNames.map { ($0, $0 == SubjectErased.eventType ? layerJudge : judge) },
      uniquingKeysWith: { first, _ in first })
    self.unknownTypes = nil
  }

  /// One schema made of several modules' schemas: their event types, projections, rules (each
  /// module's for its own event types), replicated streams and stream spellings together.
  ///
  /// Two modules must not register the same event type name (a programmer error: it stops the
  /// program). Two projections of one name are refused when a store is opened with the schema.
  /// - Parameters:
  ///   - name: the app's name.
  ///   - schemas: the modules' schemas, in order; their projections are registered in this order.
  public init(name: String, composing schemas: [AppSchema]) {
    var registry = EventTypeRegistry()
    var rules: [String: any EventAdmission] = [:]
    var owners: [String: String] = [:]
    for schema in schemas {
      for type in schema.eventTypes.typeNames where type != SubjectErased.eventType {
        if let owner = owners[type] {
          preconditionFailure(
            "the schemas '\(owner)' and '\(schema.name)' both register the event type '\(type)'")
        }
        owners[type] = schema.name
      }
      registry.merge(schema.eventTypes)
      rules.merge(schema.rules) { first, _ in first }
    }
    self.name = name
    self.eventTypes = registry
    self.projections = schemas.flatMap(\.projections)
    self.replicatedStreams = schemas.reduce(AppSchema.StreamSelection.none) { $0.union($1.replicatedStreams) }
    self.streamNames = AppSchema.StreamNames.combining(schemas.map(\.streamNames))
    self.modules = schemas.flatMap(\.modules)
    self.rules = rules
    self.unknownTypes = nil
  }

  /// The schema of a store opened with projections and one admission
  /// (``EventStore/init(path:projections:admission:options:)``): no event types; `admission`
  /// judges every event (`nil` admits every event).
  init(projections: [any Projection], admission: (any EventAdmission)?) {
    name = ""
    eventTypes = EventTypeRegistry()
    self.projections = projections
    replicatedStreams = .none
    streamNames = .verbatim
    modules = []
    rules = [:]
    unknownTypes = UnknownTypes(admission: admission)
  }

  /// Whether the events of `stream` are shared with the owner's other devices: whether
  /// ``replicatedStreams`` contains it.
  public func isReplicated(_ stream: StreamID) -> Bool { replicatedStreams.contains(stream) }

  /// The rules for events that come from elsewhere (an import, a pull), as one admission: an
  /// event goes to the rules of the module that registers its type; an event of a type that no
  /// module registers is ``EventVerdict/unreadable(reason:)``.
  public var admission: any EventAdmission { SchemaAdmission(schema: self) }

  /// The admission a store keeps: `nil` when it admits every event (an ad-hoc schema without one).
  var storeAdmission: (any EventAdmission)? {
    if let unknownTypes, unknownTypes.admission == nil { return nil }
    return admission
  }

  /// Whether this build knows the event type `type`: some module registers it.
  public func knows(eventType type: String) -> Bool { rules[type] != nil }
}

/// An ``AppSchema``'s admission: each event to its module's rules.
struct SchemaAdmission: EventAdmission {
  let schema: AppSchema

  func verdict(for event: RecordedEvent) -> EventVerdict {
    if let rules = schema.rules[event.type] { return rules.verdict(for: event) }
    if let unknown = schema.unknownTypes { return unknown.admission?.verdict(for: event) ?? .admitted }
    // Unknown to every module: the registry says so in its words.
    return schema.eventTypes.readability(of: event)
  }
}

/// The admission of a module without rules of its own: an event of its types is admitted when
/// this build reads it.
struct RegistryAdmission: EventAdmission {
  let registry: EventTypeRegistry

  func verdict(for event: RecordedEvent) -> EventVerdict { registry.readability(of: event) }
}
