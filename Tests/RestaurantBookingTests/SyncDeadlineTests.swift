import Foundation
import HTTPTestSupport
import RestaurantBooking
import Synchronization
import Testing

/// An endless or slow server cannot keep a fetch going forever (issue 14, item 7).
@Suite("Supabase source: the overall deadline")
struct SyncDeadlineTests {
  /// A server whose every page is full, with rows never seen before: paging never ends.
  static func endless() throws -> LoopbackHTTPServer {
    try LoopbackHTTPServer(maximumConnections: 10_000) { request in
      let limit = Int(request.query["limit"] ?? "") ?? 10
      let offset = Int(request.query["offset"] ?? "") ?? 0
      let rows = (offset..<offset + limit).map { index in
        #"{"id":"\#(UUID().uuidString.lowercased())","name":"Row \#(index)","cuisine":"Any"}"#
      }
      return .json("[" + rows.joined(separator: ",") + "]")
    }
  }

  @Test(
    "an endless server: deadlineExceeded naming the pages and rows fetched, at the deadline, with progress per page"
  )
  func endlessServer() async throws {
    let server = try Self.endless()
    defer { server.stop() }
    let source = SupabaseRestaurantSource(baseURL: server.baseURL, apiKey: "key", pageSize: 10)
    let reports = Mutex<[FetchProgress]>([])
    let start = ContinuousClock.now
    let error = try await #require(throws: RestaurantSyncError.self) {
      _ = try await source.fetchAll(deadline: .milliseconds(700)) { progress in
        reports.withLock { $0.append(progress) }
      }
    }
    let elapsed = ContinuousClock.now - start
    guard case .deadlineExceeded(let seconds, let pages, let rows) = error else {
      Issue.record("unexpected \(error)")
      return
    }
    #expect(seconds == 0.7)
    #expect(pages > 0 && rows == pages * 10)
    // No upper bound: in the full suite a task can wait tens of seconds for a thread of the
    // cooperative pool (other tests block both); the error says the deadline ended the fetch.
    #expect(elapsed >= .milliseconds(700), "\(elapsed)")
    let seen = reports.withLock { $0 }
    #expect(seen.count == pages)
    #expect(seen.last == FetchProgress(pages: pages, rows: rows))
    #expect(error.description.hasPrefix("the catalog did not arrive within the deadline of 0.7 s ("))
  }

  @Test("a page that would outlast the deadline is cut at the deadline, not at its own 30 s timeout")
  func slowPage() async throws {
    let server = try LoopbackHTTPServer { _ in .delayed(.seconds(60), .json("[]")) }
    defer { server.stop() }
    let source = SupabaseRestaurantSource(
      baseURL: server.baseURL, apiKey: "key", deadline: .milliseconds(500))
    #expect(source.timeout == .seconds(30))
    // deadlineExceeded, not timeout: the page's own 30 s did not end it (nor the server's 60 s).
    await #expect(throws: RestaurantSyncError.deadlineExceeded(seconds: 0.5, pages: 0, rows: 0)) {
      _ = try await source.fetchAll()
    }
    #expect(SupabaseRestaurantSource.defaultDeadline == .seconds(300))
  }
}
