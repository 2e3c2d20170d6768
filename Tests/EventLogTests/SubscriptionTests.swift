import EventLog
import Foundation
import TestKit
import Testing

@Suite("Subscriptions")
struct SubscriptionTests {
  @Test("a subscription that starts mid-log sees every later event once, in order, then live ones")
  func midLogSubscription() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    for index in 1...50 { try await store.append([try note("before \(index)")], to: "s") }
    let expectedCount = 30 + 100  // events 21...50, then 100 appended while it runs
    let received = Task {
      var sequences: [UInt64] = []
      for try await event in store.subscribe(from: 21) {
        sequences.append(event.sequence)
        if sequences.count == expectedCount { break }
      }
      return sequences
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<4 {
        group.addTask {
          for index in 0..<25 {
            try await store.append([try note("live \(writer)-\(index)")], to: StreamID("w\(writer)"))
          }
        }
      }
      try await group.waitForAll()
    }
    let sequences = try await received.value
    #expect(sequences == Array(21...150))
  }

  @Test("a cancelled subscription ends")
  func cancellation() async throws {
    let dir = TemporaryDirectory()
    let store = try EventStore(path: dir.environment(), options: .fast)
    try await store.append([try note("only")], to: "s")
    let task = Task {
      var count = 0
      for try await _ in store.subscribe() { count += 1 }
      return count
    }
    try await Task.sleep(for: .milliseconds(100))
    task.cancel()
    #expect(try await task.value == 1)
  }
}
