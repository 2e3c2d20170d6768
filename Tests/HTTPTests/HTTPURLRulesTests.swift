import HTTP
import Testing

@Suite("HTTP URL rules")
struct HTTPURLRulesTests {
  @Test(
    "loopback hosts are recognised",
    arguments: [
      ("127.0.0.1", true), ("127.255.0.9", true), ("localhost", true), ("LocalHost", true), ("::1", true),
      ("[::1]", true), ("0:0:0:0:0:0:0:1", true),
      ("128.0.0.1", false), ("127.0.0", false), ("127.0.0.1.nip.io", false), ("localhost.example", false),
      ("127.0.0.256", false), ("127.0.0.+1", false), ("", false),
    ])
  func loopback(host: String, expected: Bool) {
    #expect(HTTPURLRules.isLoopback(host: host) == expected)
  }

  @Test(
    "http and https URLs in any case, and nothing else",
    arguments: [
      ("https://example.supabase.co", true), ("HTTP://127.0.0.1:8080", true), ("Https://x", true),
      ("postgresql://localhost/db", false), ("restaurants.json", false), ("http:/x", false), ("", false),
    ])
  func http(text: String, expected: Bool) {
    #expect(HTTPURLRules.isHTTP(text) == expected)
  }
}
