// `review-device`: one device of the review convergence model check
// (`Tests/ReplicationTests/ReviewConvergenceModelCheckTests.swift`). Each run opens the store with
// the `Review` entity, does one operation, and exits, so that a test can kill it (SIGKILL) in the
// middle of a push or a pull.
import EventLog
import Foundation
import Replication
import ReplicationPostgres
import ReviewEntity
import TestKit

let usage = """
  Usage: review-device --db PATH [--clock-offset-ms N] [--seed N] COMMAND [ARGUMENTS]

  Commands:
    post                      Post a review (fields from the seed); print its ID.
    rate|retitle|reword ID    Change one field of a live review (the value from the seed).
    delete ID                 Delete a live review.
    push URL | pull URL       Replicate the review streams (retrying for --retry-for S, default 20).
    list                      The reviews, one JSON object a line, by ID.
    events                    The IDs of the review events in the log, one a line.
    check                     verify, replay = live, and the rows = the rule's rows from the log.
    pending                   How many local review events are not pushed yet.

  Exit status: 0 success, 1 failure (`error: …` on standard error; `check`: what differs), 2 the
  review is not live (an edit or a delete of a review this device does not show), 64 usage.
  """

struct Failure: Error, CustomStringConvertible {
  var description: String
}

struct NotLive: Error {}

/// The parsed command line.
struct Invocation {
  var path = ""
  var clockOffset = 0.0
  var seed: UInt64 = 1
  var retryFor = 20
  var command = ""
  var arguments: [String] = []

  init(_ arguments: [String]) throws {
    var rest = arguments[...]
    while let first = rest.first, first.hasPrefix("--") {
      rest = rest.dropFirst()
      guard let value = rest.popFirst() else { throw Failure(description: "'\(first)' needs a value") }
      switch first {
      case "--db": path = value
      case "--clock-offset-ms":
        guard let offset = Int(value) else { throw Failure(description: "'\(value)' is not a number") }
        clockOffset = Double(offset) / 1_000
      case "--seed":
        guard let seed = UInt64(value) else { throw Failure(description: "'\(value)' is not a seed") }
        self.seed = seed
      case "--retry-for":
        guard let seconds = Int(value) else { throw Failure(description: "'\(value)' is not a number") }
        retryFor = seconds
      default: throw Failure(description: "unknown option '\(first)'")
      }
    }
    guard !path.isEmpty, let command = rest.popFirst() else {
      throw Failure(description: "a --db and a command are needed")
    }
    self.command = command
    self.arguments = Array(rest)
  }
}

/// Writes `text` and a newline to standard output.
func line(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

func run(_ invocation: Invocation) async throws {
  var options = EventStore.Options()
  options.durability = .noSync
  let offset = invocation.clockOffset
  if offset != 0 { options.wallClock = { Date().addingTimeInterval(offset) } }
  let store = try EventStore(path: invocation.path, schema: Reviews.schema, options: options)
  var random = SplitMix64(seed: invocation.seed)
  func review(_ argument: String?) throws -> Review {
    guard let text = argument, let id = UUID(uuidString: text) else {
      throw Failure(description: "a review ID is needed")
    }
    guard let review = try store.read({ try Reviews.projection.reader(in: $0).row(forKey: .uuid(id)) }) else {
      throw NotLive()
    }
    return review
  }
  /// Appends `payload` to the review's stream at the version it was found live at.
  func edit(_ id: UUID, _ payload: some EventPayload) async throws {
    let stream = Reviews.stream(id)
    let version = try store.version(of: stream)
    try await store.append([try NewEvent(payload)], to: stream, expectedVersion: .exactly(version))
  }
  func replicator(_ url: String?) throws -> Replicator {
    guard let url else { throw Failure(description: "a server URL is needed") }
    var replication = ReplicationOptions()
    replication.retryFor = .seconds(invocation.retryFor)
    replication.initialBackoff = .milliseconds(50)
    replication.maximumBackoff = .milliseconds(500)
    return Replicator(
      store: store, transport: try PostgresTransport(url: url, statementTimeout: .seconds(20)),
      options: replication)
  }

  switch invocation.command {
  case "post":
    let restaurants = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"]
    let review = Review(
      id: .version7(), restaurantID: UUID(uuidString: restaurants[Int(random.next() % 2)]) ?? UUID(),
      author: "author \(random.next() % 10)", rating: Int(1 + random.next() % 5),
      title: "title \(random.next() % 1_000)", text: "text \(random.next() % 1_000)", postedAt: Date())
    try await store.append(
      [try NewEvent(ReviewPosted(review: review))], to: Reviews.stream(review.id), expectedVersion: .noStream)
    line(review.id.lowercasedString)
  case "rate":
    let id = try review(invocation.arguments.first).id
    try await edit(id, ReviewRated(id: id, rating: Int(1 + random.next() % 5)))
  case "retitle":
    let id = try review(invocation.arguments.first).id
    try await edit(id, ReviewRetitled(id: id, title: "title \(random.next() % 1_000)"))
  case "reword":
    let id = try review(invocation.arguments.first).id
    try await edit(id, ReviewReworded(id: id, text: "text \(random.next() % 1_000)"))
  case "delete":
    let id = try review(invocation.arguments.first).id
    try await edit(id, ReviewDeleted(id: id))
  case "push":
    let summary = try await replicator(invocation.arguments.first).push()
    line("pushed \(summary.pushed) already \(summary.alreadyStored) rejected \(summary.rejected)")
  case "pull":
    let summary = try await replicator(invocation.arguments.first).pull()
    line("pulled \(summary.pulled) already \(summary.alreadyPresent) unreadable \(summary.unreadable)")
  case "list":
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    encoder.dateEncodingStrategy = .millisecondsSince1970
    for review in try store.read({ try Reviews.projection.reader(in: $0).rows() }) {
      line(String(decoding: try encoder.encode(review), as: UTF8.self))
    }
  case "events":
    for event in try store.events() where Reviews.isReview(event.stream) { line(event.id.lowercasedString) }
  case "check":
    var problems: [String] = []
    let report = try store.verify()
    if !report.isClean { problems += report.problems.map { "verify: \($0)" } }
    if let difference = try store.firstDifference(from: store.replay()) {
      problems.append("replay: \(difference)")
    }
    let rows = try store.read { try Reviews.projection.reader(in: $0).rows() }
    let events = try store.events()
    let expected = try Reviews.expectedRows(events)
    if rows != expected {
      problems.append("the rows are not the rule's: \(rows.count) rows, \(expected.count) expected")
    }
    guard problems.isEmpty else { throw Failure(description: problems.joined(separator: "\n")) }
    // How many events reached this log after a later-stamped one (each made a row fold again,
    // or changed nothing: it was older than the row's last delete).
    var latest: RecordedEvent?
    var outOfOrder = 0
    for event in events {
      if let last = latest, Reviews.stampOrder(event, last) { outOfOrder += 1 } else { latest = event }
    }
    line("ok \(rows.count) reviews, \(events.count) events, \(outOfOrder) out of stamp order")
  case "pending":
    line("\(try LocalReplica(store: store).status().pending)")
  default:
    throw Failure(description: "unknown command '\(invocation.command)'\n\(usage)")
  }
}

do {
  let invocation = try Invocation(Array(CommandLine.arguments.dropFirst()))
  do {
    try await run(invocation)
    exit(0)
  } catch is NotLive {
    FileHandle.standardError.write(Data("not live\n".utf8))
    exit(2)
  } catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
  }
} catch {
  FileHandle.standardError.write(Data("error: \(error)\n\(usage)\n".utf8))
  exit(64)
}
