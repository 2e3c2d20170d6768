import EventLog
import Foundation

/// What ``Replicator/verifyRemote(progress:onRetry:)`` (`eventlog verify --remote`) found: this
/// environment checked against the owner's log on the server and the heads the server attested
/// for this device (server schema version 5). `Docs/Replication.md`, "Anchoring the chain", says
/// what each check proves and what it cannot.
public struct RemoteVerificationReport: Sendable, Hashable {
  /// A kind of difference.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// A server event of the owner that this environment does not hold (nor recorded as one it
    /// cannot store).
    case missingHere = "missing-here"
    /// A server event this environment holds under its ID with other content (stream, type,
    /// schema version, payload, metadata, recorded-at, origin).
    case contentDiffers = "content-differs"
    /// An event this environment records at another server position than the server's.
    case positionDiffers = "position-differs"
    /// A server row whose stored chain value is not what the row and the value before it give.
    case chainBroken = "chain-broken"
    /// The server's chain at the position this device recorded it at when it pulled is another
    /// value now (or the server holds fewer events).
    case serverHeadChanged = "server-head-changed"
    /// A head the server attested for this device (under its key) that is not this
    /// environment's chain value at that sequence.
    case attestedHeadDiffers = "attested-head-differs"
    /// The server's chain value recorded with an attestation is not its chain value at that
    /// position now.
    case attestationServerHeadDiffers = "attestation-server-head-differs"
    /// A head attested for this device's ID under another device key.
    case foreignAttestation = "foreign-attestation"
    /// An event of this device's own at or below its pushed mark that the server does not hold.
    case missingOnServer = "missing-on-server"
  }

  /// One difference, naming the event, position or sequence it concerns.
  public struct Problem: Sendable, Hashable, CustomStringConvertible {
    /// Its kind.
    public var kind: Kind
    /// The server position concerned, if any.
    public var position: UInt64?
    /// The local sequence concerned, if any.
    public var sequence: UInt64?
    /// The event ID concerned, if any.
    public var id: UUID?
    /// What differs, in a sentence.
    public var problem: String

    /// ``problem``.
    public var description: String { problem }
  }

  /// What was checked.
  public struct Counts: Sendable, Hashable {
    /// Rows of the owner's log on the server walked (positions 1 to ``RemoteVerificationReport/serverHead``).
    public var serverEvents = 0
    /// Of them, events this environment holds with the same content.
    public var matched = 0
    /// Of them, rows this device recorded as ones it cannot store (`remote status`, "not stored").
    public var notStored = 0
    /// Rows whose chain value was recomputed from the row.
    public var chainRecomputed = 0
    /// Rows whose chain value could not be recomputed (a row the transport could not take); the
    /// walk goes on from the value the server holds.
    public var chainNotRecomputed = 0
    /// Heads the server attested for this device under its key.
    public var attestedHeads = 0
    /// Of them, heads at a record stored before environment format 5 and not rewritten yet: not
    /// compared.
    public var attestedHeadsUnchained = 0
    /// This device's own events (the outbox's kind) at or below its pushed mark.
    public var ownEvents = 0
    /// Of them, events the server refused (`remote status`): not expected on the server.
    public var ownRejected = 0

    /// No counts yet.
    public init() {}
  }

  /// The server, as messages name it.
  public var server: String
  /// The owner whose log was checked.
  public var owner: String
  /// This environment's device ID.
  public var device: UUID?
  /// The owner's last position on the server when the check began: the positions walked.
  public var serverHead: UInt64
  /// The server's chain value at ``serverHead``, when the walk got there.
  public var serverChainHead: ServerChainHead?
  /// The server's chain value this device recorded at its last pull, if any.
  public var recordedServerHead: ServerChainHead?
  /// This device's pushed mark.
  public var pushedThrough: UInt64
  /// What was checked.
  public var checked = Counts()
  /// The differences found: at most ``RemoteVerificationReport/maximumPerKind`` of each kind, in
  /// the order found (``problemCounts`` has every one).
  public var problems: [Problem] = []
  /// How many differences of each kind were found.
  public var problemCounts: [Kind: Int] = [:]

  /// At most this many problems of one kind are kept (the rest are counted).
  public static let maximumPerKind = 10

  /// Whether nothing differs.
  public var isClean: Bool { problemCounts.isEmpty }

  mutating func record(
    _ kind: Kind, position: UInt64? = nil, sequence: UInt64? = nil, id: UUID? = nil, _ problem: String
  ) {
    let count = problemCounts[kind, default: 0]
    problemCounts[kind] = count + 1
    guard count < Self.maximumPerKind else { return }
    problems.append(Problem(kind: kind, position: position, sequence: sequence, id: id, problem: problem))
  }
}

extension Replicator {
  /// Checks this environment against the owner's log on the server, reading both and writing
  /// neither (server schema version 5 or later):
  ///
  /// - every server event of the owner is here, by ID, with the same content (stream, type,
  ///   schema version, payload converted as a pull converts it, metadata, recorded-at, origin
  ///   device and sequence) and, where this device knows it, at the same position; a row this
  ///   device recorded as one it cannot store is counted, not a difference;
  /// - the server's chain recomputes from its rows, row by row, and matches the value this device
  ///   recorded at its last pull, and the values recorded with each attestation;
  /// - every head the server attested for this device matches this environment's chain value at
  ///   that sequence (and none was attested for its ID under another key);
  /// - every event of this device's own on replicated streams at or below its pushed mark is on
  ///   the server (but those the server refused).
  ///
  /// The owner's log is walked in pages (``ReplicationOptions/pullPageSize`` rows, at most
  /// ``ReplicationOptions/pullPageBytes`` of payload), under the deadline of a pull.
  /// - Parameters:
  ///   - progress: called after each page, with the positions walked and the owner's head.
  ///   - onRetry: called before each retry of a transient failure.
  /// - Returns: what was checked and every difference (the first ones of each kind in full).
  /// - Throws: ``ReplicationError/schemaTooOld(server:found:required:)`` for a server before
  ///   version 5, ``ReplicationError/ownerMismatch(server:recorded:found:)`` when the server takes
  ///   the credentials for another owner than this device's, a transport or storage error.
  /// - Complexity: O(n + m) for n local events and m server rows; memory for the local events'
  ///   IDs and the server's.
  public func verifyRemote(
    progress: (@Sendable (ReplicationProgress) -> Void)? = nil,
    onRetry: (@Sendable (String, Duration) -> Void)? = nil
  ) async throws -> RemoteVerificationReport {
    try await withDeadline {
      let info = try await retrying(onRetry: onRetry) { try await transport.serverInfo() }
      guard info.schemaVersion >= Self.anchoringSchema else {
        throw ReplicationError.schemaTooOld(
          server: transport.server, found: info.schemaVersion, required: Self.anchoringSchema)
      }
      if let recorded = try local.owner(), recorded != info.owner {
        throw ReplicationError.ownerMismatch(server: transport.server, recorded: recorded, found: info.owner)
      }
      var check = RemoteCheck(replicator: self, info: info)
      try check.readLocal()
      let attestations = try await check.readAttestations(onRetry: onRetry)
      try await check.walkServer(interesting: attestations, progress: progress, onRetry: onRetry)
      try check.checkAttestations(attestations)
      check.checkRecordedHead()
      check.checkOwnEvents()
      return check.report
    }
  }
}

/// The state of one ``Replicator/verifyRemote(progress:onRetry:)``.
private struct RemoteCheck {
  let replicator: Replicator
  let info: ServerInfo
  var report: RemoteVerificationReport
  /// Every local event's sequence by its ID.
  var sequences: [UUID: UInt64] = [:]
  /// This device's own events at or below its pushed mark, in order.
  var own: [(sequence: UInt64, id: UUID)] = []
  /// The IDs the server holds.
  var serverIDs = Set<UUID>()
  /// The server's stored chain values at the positions some check needs.
  var storedChains: [UInt64: ChainValue] = [:]
  /// The server rows this device recorded as ones it cannot store, by position.
  var unstorable: [UInt64: UUID?] = [:]
  var rejected = Set<UInt64>()
  var cursor = PullCursor(position: 0, eventID: nil)

  var store: EventStore { replicator.store }
  var server: String { replicator.transport.server }

  init(replicator: Replicator, info: ServerInfo) {
    self.replicator = replicator
    self.info = info
    report = RemoteVerificationReport(
      server: replicator.transport.server, owner: info.owner, device: replicator.store.deviceID,
      serverHead: info.head, pushedThrough: 0)
  }

  /// Reads the local log once (IDs, this device's own events) and replication's notes.
  mutating func readLocal() throws {
    let local = replicator.local
    report.pushedThrough = try local.pushedThrough()
    report.recordedServerHead = try local.serverHead()
    cursor = try local.pullCursor()
    for entry in try store.stateEntries(withPrefix: ReplicationState.unstorablePrefix) {
      guard let position = ReplicationState.number(inKey: entry.key, after: ReplicationState.unstorablePrefix)
      else { continue }
      unstorable[position] = ReplicationState.readNote(entry.value).id
    }
    rejected = Set(try local.rejections().map(\.sequence))
    var next: UInt64 = 1
    while true {
      let events = try store.events(from: next, limit: 4_096)
      guard let last = events.last else { break }
      let pulled = try local.pulledSequences(from: next, through: last.sequence)
      for event in events {
        sequences[event.id] = event.sequence
        if event.sequence <= report.pushedThrough && replicator.isReplicated(event.stream)
          && !pulled.contains(event.sequence)
        {
          own.append((event.sequence, event.id))
        }
      }
      next = last.sequence + 1
    }
  }

  /// Every head the server attested for this device's ID.
  func readAttestations(
    onRetry: (@Sendable (String, Duration) -> Void)?
  ) async throws -> [AttestedHead] {
    guard let device = store.deviceID else { return [] }
    var all: [AttestedHead] = []
    var after: UInt64 = 0
    while true {
      let page = try await replicator.retrying(onRetry: onRetry) {
        try await replicator.transport.attestedHeads(device: device, after: after, limit: 1_000)
      }
      ReplicationDeadline.current?.progressed()
      guard let last = page.last, last.attestation > after else { break }
      all += page
      after = last.attestation
      if page.count < 1_000 { break }
    }
    return all
  }

  /// Walks the owner's log on the server, positions 1 to its head: the chain recomputed, each
  /// event looked up here.
  mutating func walkServer(
    interesting attestations: [AttestedHead], progress: (@Sendable (ReplicationProgress) -> Void)?,
    onRetry: (@Sendable (String, Duration) -> Void)?
  ) async throws {
    var wanted = Set(attestations.map(\.serverPosition))
    if let recorded = report.recordedServerHead { wanted.insert(recorded.position) }
    wanted.insert(info.head)
    let conversion = try PayloadConversion(store: store)
    var previous: ChainValue? = ServerChain.genesis
    var after = PullCursor(position: 0, eventID: nil)
    let pageSize = max(1, replicator.options.pullPageSize)
    while after.position < info.head {
      let rows = try await replicator.retrying(onRetry: onRetry) { [after] in
        try await replicator.transport.pullChained(
          after: after, limit: pageSize, maxBytes: replicator.options.pullPageBytes)
      }
      ReplicationDeadline.current?.progressed()
      guard !rows.isEmpty else {
        throw ReplicationError.protocolViolation(
          server: server,
          reason: "it answered an empty page after position \(after.position) while its head is \(info.head)")
      }
      for fields in rows {
        let row = try ReplicationWire.row(fields, server: server)
        guard row.position == after.position + 1 else {
          throw ReplicationError.protocolViolation(
            server: server, reason: "a walk after \(after.position) answered position \(row.position)")
        }
        after = PullCursor(position: row.position, eventID: row.id)
        guard row.position <= info.head else { break }
        previous = checkChain(fields, row: row, after: previous)
        if wanted.contains(row.position), let stored = fields.chain.flatMap(ChainValue.init(hex:)) {
          storedChains[row.position] = stored
        }
        try checkContent(row, conversion: conversion)
      }
      progress?(
        ReplicationProgress(phase: "verify", completed: Int(after.position), total: Int(info.head)))
    }
    if let value = storedChains[info.head] {
      report.serverChainHead = ServerChainHead(position: info.head, value: value)
    }
  }

  /// Recomputes row `fields`' chain value after `previous` and compares it with the one the
  /// server holds; the value to go on from.
  mutating func checkChain(
    _ fields: ReplicationWire.RowFields, row: PulledRow, after previous: ChainValue?
  ) -> ChainValue? {
    let stored = fields.chain.flatMap(ChainValue.init(hex:))
    let recomputed = previous.flatMap { ServerChain.value(after: $0, row: fields, owner: info.owner) }
    guard let recomputed else {
      report.checked.chainNotRecomputed += 1
      return stored
    }
    report.checked.chainRecomputed += 1
    guard let stored else {
      report.record(
        .chainBroken, position: row.position, id: row.id,
        "the server sent no chain value at position \(row.position)\(Self.idText(row.id))")
      return recomputed
    }
    if stored != recomputed {
      report.record(
        .chainBroken, position: row.position, id: row.id,
        "the server's chain breaks at position \(row.position)\(Self.idText(row.id)): it holds "
          + "\(Self.short(stored)) there, but the row and the value before it give \(Self.short(recomputed)): "
          + "the row was changed after it was chained")
    }
    return stored
  }

  /// Looks the server's row up here.
  mutating func checkContent(_ row: PulledRow, conversion: PayloadConversion) throws {
    report.checked.serverEvents += 1
    if let id = row.id { serverIDs.insert(id) }
    guard let id = row.id, let sequence = sequences[id] else {
      if let noted = unstorable[row.position], noted == nil || noted == row.id {
        report.checked.notStored += 1
        return
      }
      let pending =
        row.position > cursor.position
        ? " (past this device's pull cursor, position \(cursor.position): pull first)" : ""
      switch row {
      case .event(let event):
        report.record(
          .missingHere, position: row.position, id: event.id,
          "the server holds device \(event.originDevice.lowercasedString)'s seq \(event.originSequence) "
            + "(id \(event.id.lowercasedString), position \(row.position)); this environment does not\(pending)"
        )
      case .malformed(_, let id, let reason):
        report.record(
          .missingHere, position: row.position, id: id,
          "the server holds a row at position \(row.position)\(Self.idText(id)) that this environment neither "
            + "holds nor recorded as one it cannot store (\(reason))\(pending)")
      }
      return
    }
    if let known = try replicator.local.position(ofLocalSequence: sequence), known != row.position {
      report.record(
        .positionDiffers, position: row.position, sequence: sequence, id: id,
        "this environment records its seq \(sequence) (id \(id.lowercasedString)) at server position \(known); "
          + "the server holds it at position \(row.position)")
    }
    guard let local = try store.event(at: sequence) else { return }
    let fields: [String]
    switch row {
    case .malformed(_, _, let reason):
      fields = ["the server's row is not an event this build can read (\(reason))"]
    case .event(let event):
      fields = Self.differences(local: local, server: event, conversion: conversion)
    }
    guard !fields.isEmpty else {
      report.checked.matched += 1
      return
    }
    report.record(
      .contentDiffers, position: row.position, sequence: sequence, id: id,
      "the server's event at position \(row.position) (id \(id.lowercasedString)) differs from this "
        + "environment's seq \(sequence): " + fields.joined(separator: ", "))
  }

  /// The fields in which `local` and the server's `event` with its ID differ.
  static func differences(
    local: RecordedEvent, server event: ServerEvent, conversion: PayloadConversion
  ) -> [String] {
    var fields: [String] = []
    if local.stream != event.stream { fields.append("stream") }
    if local.type != event.type { fields.append("type") }
    if local.schemaVersion != event.schemaVersion { fields.append("schema version") }
    switch conversion.incoming(event) {
    case .event(let converted):
      // A payload this log kept as the server's JSON (a type it could not read then) is compared
      // as that JSON.
      if local.payload != converted.payload
        && !(local.payloadEncoding == .json && local.payload == event.payload)
      {
        fields.append("payload")
      }
    case .unconvertible(let reason):
      if !(local.payloadEncoding == .json && local.payload == event.payload) {
        fields.append("payload (this build cannot convert the server's: \(reason))")
      }
    }
    if local.metadata != event.metadata { fields.append("metadata") }
    if local.recordedAt.microsecondsSince1970 != event.recordedAt.microsecondsSince1970 {
      fields.append("recorded time")
    }
    if let provenance = local.provenance,
      provenance.device != event.originDevice || provenance.sequence != event.originSequence
    {
      fields.append(
        "origin (here device \(provenance.device.lowercasedString)'s seq \(provenance.sequence), on the server "
          + "device \(event.originDevice.lowercasedString)'s seq \(event.originSequence))")
    }
    return fields
  }

  /// Compares every head attested for this device with this environment's chain.
  mutating func checkAttestations(_ attestations: [AttestedHead]) throws {
    let keyHash = try replicator.deviceKeyHash()
    let localHead = try store.head()
    let matching = Set(
      try attestations.filter { $0.keyHash == keyHash }.compactMap { attestation -> UInt64? in
        try store.event(at: attestation.sequence)?.chain == attestation.head ? attestation.attestation : nil
      })
    for attestation in attestations {
      let sequence = attestation.sequence
      let when = "attestation \(attestation.attestation), \(ISO8601.string(from: attestation.attestedAt))"
      guard attestation.keyHash == keyHash else {
        report.record(
          .foreignAttestation, sequence: sequence,
          "the server holds a head for this device's ID at seq \(sequence) (\(when)) attested with another "
            + "device key: another device of the owner used this device's ID, or a copy of this environment "
            + "pushed with another key")
        continue
      }
      report.checked.attestedHeads += 1
      let attested =
        "the server attested this device's chain at seq \(sequence) as \(Self.short(attestation.head)) (\(when))"
      if let event = try store.event(at: sequence) {
        if let chain = event.chain {
          if chain != attestation.head {
            let replaced =
              attestations.contains {
                $0.sequence == sequence && $0.attestation > attestation.attestation
                  && matching.contains($0.attestation)
              }
              ? " (a later head attested at seq \(sequence) matches: this device's history there was replaced, as a "
                + "restore from an older copy does)" : ""
            report.record(
              .attestedHeadDiffers, sequence: sequence, id: event.id,
              "\(attested); this environment's chain there is \(Self.short(chain)): its history up to seq "
                + "\(sequence) was changed\(replaced)")
          }
        } else {
          report.checked.attestedHeadsUnchained += 1
        }
      } else {
        report.record(
          .attestedHeadDiffers, sequence: sequence,
          "\(attested); this environment has no event at seq \(sequence) (its last is seq \(localHead)): "
            + "events were removed")
      }
      checkServerHead(of: attestation)
    }
  }

  /// Compares the server's chain value recorded with `attestation` with its value there now.
  mutating func checkServerHead(of attestation: AttestedHead) {
    let position = attestation.serverPosition
    guard position > 0 else { return }
    let what =
      "when the server accepted this device's head at seq \(attestation.sequence) (attestation "
      + "\(attestation.attestation)), its chain at position \(position) was \(Self.short(attestation.serverHead))"
    guard position <= info.head else {
      report.record(
        .attestationServerHeadDiffers, position: position, sequence: attestation.sequence,
        "\(what); it now holds only \(info.head) events: it lost events")
      return
    }
    if let now = storedChains[position], now != attestation.serverHead {
      report.record(
        .attestationServerHeadDiffers, position: position, sequence: attestation.sequence,
        "\(what); it holds \(Self.short(now)) there now: its log up to position \(position) was rewritten")
    }
  }

  /// Compares the server's chain value this device recorded at its last pull with the value the
  /// server holds there now.
  mutating func checkRecordedHead() {
    guard let recorded = report.recordedServerHead, recorded.position > 0 else { return }
    let what =
      "this device recorded the server's chain at position \(recorded.position) as \(Self.short(recorded.value)) "
      + "when it pulled"
    guard recorded.position <= info.head else {
      report.record(
        .serverHeadChanged, position: recorded.position,
        "\(what), but the server now holds only \(info.head) events: it lost events")
      return
    }
    if let now = storedChains[recorded.position], now != recorded.value {
      report.record(
        .serverHeadChanged, position: recorded.position,
        "\(what); the server holds \(Self.short(now)) there now: its log up to position \(recorded.position) "
          + "was rewritten, its rows and its chain")
    }
  }

  /// Checks that the server holds every event of this device's own at or below its pushed mark.
  mutating func checkOwnEvents() {
    for (sequence, id) in own {
      report.checked.ownEvents += 1
      if rejected.contains(sequence) {
        report.checked.ownRejected += 1
        continue
      }
      if !serverIDs.contains(id) {
        report.record(
          .missingOnServer, sequence: sequence, id: id,
          "this device's seq \(sequence) (id \(id.lowercasedString)) is at or below its pushed mark (seq "
            + "\(report.pushedThrough)), but the server does not hold it")
      }
    }
  }

  static func idText(_ id: UUID?) -> String { id.map { " (id \($0.lowercasedString))" } ?? "" }

  /// The first 16 hexadecimal digits of `value` and an ellipsis.
  static func short(_ value: ChainValue) -> String { String(value.hex.prefix(16)) + "…" }
}
