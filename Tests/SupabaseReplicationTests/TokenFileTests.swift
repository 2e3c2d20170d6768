import EventLog
import Foundation
import HTTPTestSupport
import PostgRESTTestSupport
import PostgresTestSupport
import RestaurantBooking
import Synchronization
import TestKit
import Testing

#if canImport(Glibc)
  import Glibc  // chmod, chown, symlink
#endif

extension SupabaseReplication {
  /// Issue 28: a token file anyone could write (mode 0666) was read silently, so whoever wrote it
  /// chose whose log the device's events went to.
  @Suite("Access token files that others can change are refused")
  struct TokenFileTests {
    func device(environment: [String: String] = [:]) -> CommandLineDevice {
      SupabaseCommandLineTests.device(label: "cli-token-file", environment: environment)
    }

    @Test("a token file its group or others can write, or in such a directory, or another user's: refused")
    func unsafeTokenFiles() async throws {
      let api = try await APIProject()
      defer { api.project.stop() }
      let url = api.url.absoluteString
      let phone = device(environment: ["SUPABASE_ANON_KEY": api.anonKey])
      try phone.book()
      #expect(chmod(phone.directory.path, 0o700) == 0)
      let token = api.token(UUID())
      let safe = try phone.directory.file("token", Data((token + "\n").utf8))
      #expect(chmod(safe, 0o600) == 0)

      let open = try phone.directory.file("token-0666", Data((token + "\n").utf8))
      #expect(chmod(open, 0o666) == 0)
      let groupWritable = try phone.directory.file("token-0620", Data((token + "\n").utf8))
      #expect(chmod(groupWritable, 0o620) == 0)
      let link = phone.directory.path("token-link")
      #expect(symlink(open, link) == 0)
      let shared = phone.directory.path("shared")
      try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
      #expect(chmod(shared, 0o777) == 0)
      let inShared = shared + "/token"
      try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: inShared))
      #expect(chmod(inShared, 0o600) == 0)
      var cases = [(open, "0666"), (groupWritable, "0620"), (link, "0666"), (inShared, "0777")]
      if geteuid() == 0 {
        let others = try phone.directory.file("token-nobody", Data((token + "\n").utf8))
        #expect(chmod(others, 0o600) == 0 && chown(others, 65_534, 65_534) == 0)
        cases.append((others, "65534"))
      }
      for (file, shown) in cases {
        let run = try phone("push", url, "--access-token-file", file)
        #expect(run.status == 1, "\(file): \(run)")
        #expect(
          run.stderr.contains("--access-token-file") && run.stderr.contains(file)
            && run.stderr.contains(shown),
          "\(file): \(run.stderr)")
        #expect(!run.stderr.contains(token))
      }
      #expect(api.standIn.requests.isEmpty, "nothing was sent")
      #expect(try phone.json("remote", "status", "--json")["pending"] as? Int == 1)
      let pushed = try phone("push", url, "--access-token-file", safe)
      #expect(pushed.status == 0, "\(pushed)")
    }
  }
}
