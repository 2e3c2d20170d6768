import Foundation
import HTTPTestSupport
import RestaurantBooking

extension LoopbackHTTPServer {
  /// A server answering `/rest/v1/restaurants` as PostgREST does, from `rows` (by `limit` and
  /// `offset`), or with `override`'s reply when it returns one.
  static func postgrest(
    _ rows: [RemoteRestaurant], override: (@Sendable (Request) -> Reply?)? = nil
  ) throws -> LoopbackHTTPServer {
    let encoded = rows.map { row -> [UInt8] in
      let wire = WireRow(id: row.id.uuidString.lowercased(), name: row.name, cuisine: row.cuisine)
      return Array((try? JSONEncoder().encode(wire)) ?? Data())
    }
    // The default lifetime: with 60 s, the server of a test slowed by a loaded run stopped
    // listening between its pages ("Couldn't connect to server" at the third page, 87 s into
    // "2,500 rows arrive in pages of 1,000").
    return try LoopbackHTTPServer(maximumConnections: 32) { request in
      if let reply = override?(request) { return reply }
      guard request.path == "/rest/v1/restaurants" else {
        return .postgrestError(404, code: "PGRST125", message: "Invalid path specified in request URL")
      }
      let limit = Int(request.query["limit"] ?? "") ?? rows.count
      let offset = Int(request.query["offset"] ?? "") ?? 0
      let page = encoded.dropFirst(offset).prefix(limit)
      var body: [UInt8] = [UInt8(ascii: "[")]
      for (index, row) in page.enumerated() {
        if index > 0 { body.append(UInt8(ascii: ",")) }
        body += row
      }
      body.append(UInt8(ascii: "]"))
      return .respond(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }
  }
}

extension LoopbackHTTPServer.Reply {
  /// PostgREST's error body.
  static func postgrestError(_ status: Int, code: String, message: String) -> Self {
    .json(#"{"code":"\#(code)","details":null,"hint":null,"message":"\#(message)"}"#, status: status)
  }
}
