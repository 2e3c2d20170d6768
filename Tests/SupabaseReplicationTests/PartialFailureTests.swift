import EventLog
import Foundation
import HTTPTestSupport
import PostgRESTTestSupport
import PostgresTestSupport
import RestaurantBooking
import Synchronization
import TestKit
import Testing

extension SupabaseReplication {
  /// Issue 28: a push of several batches that failed after the first said "nothing was marked",
  /// when the first batch was pushed and marked.
  @Suite("A failed replication command says what it had done")
  struct PartialFailureTests {
    func device(environment: [String: String] = [:]) -> CommandLineDevice {
      SupabaseCommandLineTests.device(label: "cli-partial", environment: environment)
    }

    @Test("a push that fails after some batches says how many were pushed and marked, and how many wait")
    func aPartialPushSaysWhatItDid() async throws {
      let user = UUID()
      let owner = "user:\(user.lowercasedString)"
      let pushes = Counter()
      // A project that stores the first batch, then refuses the session (an expired token).
      let server = try HostileProject { request in
        func rows(_ rows: [[String: Any]]) -> LoopbackHTTPServer.Reply {
          .json(
            String(
              decoding: (try? JSONSerialization.data(withJSONObject: rows)) ?? Data("[]".utf8), as: UTF8.self)
          )
        }
        switch request.path {
        case "/rest/v1/rpc/server_info":
          return rows([["schema_version": 3, "clients_from": 3, "owner": owner, "owner_head": 0]])
        case "/rest/v1/rpc/device_mark":
          return rows([["pushed_through": 0, "last_sequence": NSNull(), "last_id": NSNull()]])
        case "/rest/v1/rpc/push":
          let first = pushes.next() == 1
          guard first,
            let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let events = body["p_events"] as? [[String: Any]]
          else {
            return .json(
              #"{"code":"PGRST303","message":"JWT expired","details":null,"hint":null}"#, status: 401)
          }
          return rows(
            events.enumerated().map { index, event in
              [
                "event_id": event["id"] ?? "", "event_position": index + 1, "outcome": "stored",
                "reason": NSNull(),
              ]
            })
        default:
          return .json(#"{"code":"XX000","message":"unexpected","details":null,"hint":null}"#, status: 500)
        }
      }
      let phone = device(environment: ["SUPABASE_ANON_KEY": "anon-key", "EVENTLOG_ACCESS_TOKEN": "a-token"])
      do {
        // 700 bookings: a batch of 500 and one of 200.
        let store = try EventStore(path: phone.database, schema: .restaurantBooking, options: .fast)
        let id = UUID()
        try await store.append(
          [try NewEvent(RestaurantAdded(restaurantID: id, name: "Pasta Palace", cuisine: "italian"))],
          to: RestaurantBookingStreams.catalog)
        let bookings = EventSourcedBookingRepository(store: store, origin: "test")
        for index in 0..<700 {
          _ = try await bookings.create(
            restaurantID: id, date: Date().addingTimeInterval(86_400), partySize: 2,
            customerName: "Guest \(index)",
            notes: nil)
        }
      }
      let run = try phone("push", server.url.absoluteString)
      #expect(run.status == 1, "\(run)")
      #expect(run.stderr.contains("sign in again"), "\(run.stderr)")
      #expect(!run.stderr.contains("nothing was marked"), "\(run.stderr)")
      #expect(
        run.stderr.contains("500 of 700 events were pushed and marked before this")
          && run.stderr.contains("the other 200 wait for the next push"), "\(run.stderr)")
      let status = try phone.json("remote", "status", "--json")
      #expect(status["pending"] as? Int == 200 && status["pushedThrough"] as? Int == 501, "\(status)")
    }
  }
}

/// A count a test's server keeps across requests.
final class Counter: Sendable {
  private let value = Mutex(0)
  /// The count after one more.
  func next() -> Int {
    value.withLock { count in
      count += 1
      return count
    }
  }
}
