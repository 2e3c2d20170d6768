import Foundation
import HTTPTestSupport
import RestaurantBooking

extension LoopbackHTTPServer {
  /// A PostgREST-like server of `rows` (by `limit` and `offset`), unless `override` answers.
  static func postgrest(
    _ rows: [RemoteRestaurant], host: String = "127.0.0.1", override: (@Sendable (Request) -> Reply?)? = nil
  ) throws -> LoopbackHTTPServer {
    try LoopbackHTTPServer(host: host) { request in
      if let reply = override?(request) { return reply }
      guard request.path == "/rest/v1/restaurants" else {
        return .json(#"{"code":"PGRST125","message":"Invalid path"}"#, status: 404)
      }
      let limit = Int(request.query["limit"] ?? "") ?? rows.count
      let offset = Int(request.query["offset"] ?? "") ?? 0
      return .json(restaurantsJSON(Array(rows.dropFirst(offset).prefix(limit))))
    }
  }
}

/// A PostgREST body of `rows`.
func restaurantsJSON(_ rows: [RemoteRestaurant]) -> String {
  struct Wire: Encodable {
    var id: String
    var name: String
    var cuisine: String
  }
  let wire = rows.map { Wire(id: $0.id.uuidString.lowercased(), name: $0.name, cuisine: $0.cuisine) }
  return String(decoding: (try? JSONEncoder().encode(wire)) ?? Data("[]".utf8), as: UTF8.self)
}
